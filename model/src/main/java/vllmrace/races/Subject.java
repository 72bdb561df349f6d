package vllmrace.races;

import java.util.Objects;
import java.util.Set;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * What an engine judges: a race's scenario under one variant's fixes, or (an {@link Variant#ONLY_CLOSER} cell) under
 * every fix but the race's other closers. {@link #withActorFault()} is the harness self-test: the same scenario with
 * actor 1's first step made to raise, as a broken model would; every engine must call that a harness error, never the
 * race.
 *
 * @param only the closer an only-closer cell keeps, else null
 */
public record Subject(Race race, Variant variant, Fix only, boolean actorFault) {

    public Subject {
        Objects.requireNonNull(race, "race");
        Objects.requireNonNull(variant, "variant");
        if ((variant == Variant.ONLY_CLOSER) != (only != null)) {
            throw new IllegalArgumentException("an only-closer cell, and only it, names its closer: " + variant + " " + only);
        }
    }

    public static Subject of(Race race, Variant variant) {
        return new Subject(race, variant, null, false);
    }

    /** {@code closer} of {@code race} alone. */
    public static Subject onlyCloser(Race race, Fix closer) {
        race.fixesWithOnly(closer); // throws unless it is a closer
        return new Subject(race, Variant.ONLY_CLOSER, closer, false);
    }

    /** The same subject with actor 1's first step raising an {@link IllegalStateException}. */
    public Subject withActorFault() {
        return new Subject(race, variant, only, true);
    }

    public FixSet fixes() {
        return only == null ? race.fixes(variant) : race.fixesWithOnly(only);
    }

    /** The invariants a violating run may break and still count as clean: what a partial closer is declared to leave. */
    public Set<String> tolerated() {
        return only == null ? Set.of() : race.closers().leaves(only);
    }

    /** A fresh scenario on a fresh model, at the default point of the race's family. */
    public RaceScenario newScenario() {
        return newScenario(race.grid().get(0));
    }

    /** A fresh scenario on a fresh model at one point of the race's family. */
    public RaceScenario newScenario(Params point) {
        RaceScenario scenario = race.scenario(fixes(), point);
        if (actorFault) {
            scenario.actor1().injectFault(new IllegalStateException("injected fault: actor 1 raises (harness self-test)"));
        }
        return scenario;
    }

    /** How results name the variant: {@code reported}, ..., {@code only NIXL_PIN_PULL_BLOCKS}. */
    public String variantLabel() {
        return only == null ? variant.label() : variant.label() + " " + only.name();
    }

    /** {@code Race [variant]}, and the injected fault if any. */
    public String label() {
        return race.name() + " [" + variantLabel() + (actorFault ? ", actor 1 made to raise" : "") + "]";
    }
}
