package vllmrace.races;

import java.util.Objects;
import vllmrace.model.fix.FixSet;

/**
 * What an engine judges: a race's scenario under one variant's fixes. {@link #withActorFault()} is the harness
 * self-test: the same scenario with actor 1's first step made to raise, as a broken model would; every engine must
 * call that a harness error, never the race.
 */
public record Subject(Race race, Variant variant, boolean actorFault) {

    public Subject {
        Objects.requireNonNull(race, "race");
        Objects.requireNonNull(variant, "variant");
    }

    public static Subject of(Race race, Variant variant) {
        return new Subject(race, variant, false);
    }

    /** The same subject with actor 1's first step raising an {@link IllegalStateException}. */
    public Subject withActorFault() {
        return new Subject(race, variant, true);
    }

    public FixSet fixes() {
        return race.fixes(variant);
    }

    /** A fresh scenario on a fresh model. */
    public RaceScenario newScenario() {
        RaceScenario scenario = race.scenario(fixes());
        if (actorFault) {
            scenario.actor1().injectFault(new IllegalStateException("injected fault: actor 1 raises (harness self-test)"));
        }
        return scenario;
    }

    /** {@code Race [variant]}, and the injected fault if any. */
    public String label() {
        return race.name() + " [" + variant.label() + (actorFault ? ", actor 1 made to raise" : "") + "]";
    }
}
