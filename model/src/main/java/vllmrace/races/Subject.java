package vllmrace.races;

import java.util.Objects;
import java.util.Set;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * What an engine judges: a race's scenario under one variant's fixes, or (an {@link Variant#ONLY_CLOSER} cell) under
 * every fix but the race's other closers, or (a {@link Variant#UPSTREAM_MAIN} cell) under one deployment
 * {@link Profile} of vLLM main: its merged fixes and its configuration. {@link #withFault} is the harness self-test:
 * the same scenario broken as a broken model would break it ({@link HarnessFault}); every engine must call that a
 * harness error, never the race and never clean.
 *
 * @param only    the closer an only-closer cell keeps, else null
 * @param profile the deployment a vLLM-main cell runs, else null
 * @param fault   harness self-test: the fault injected into every run, else null
 */
public record Subject(Race race, Variant variant, Fix only, Profile profile, HarnessFault fault) {

    public Subject {
        Objects.requireNonNull(race, "race");
        Objects.requireNonNull(variant, "variant");
        if ((variant == Variant.ONLY_CLOSER) != (only != null)) {
            throw new IllegalArgumentException("an only-closer cell, and only it, names its closer: " + variant + " " + only);
        }
        if ((variant == Variant.UPSTREAM_MAIN) != (profile != null)) {
            throw new IllegalArgumentException("a vLLM-main cell, and only it, names its profile: " + variant + " " + profile);
        }
    }

    /** A variant's cell; vLLM main means the {@link Profile#MAIN} profile. */
    public static Subject of(Race race, Variant variant) {
        return new Subject(race, variant, null, variant == Variant.UPSTREAM_MAIN ? Profile.MAIN : null, null);
    }

    /** The race on one deployment profile of vLLM main. */
    public static Subject onMain(Race race, Profile profile) {
        return new Subject(race, Variant.UPSTREAM_MAIN, null, Objects.requireNonNull(profile, "profile"), null);
    }

    /** {@code closer} of {@code race} alone. */
    public static Subject onlyCloser(Race race, Fix closer) {
        race.fixesWithOnly(closer); // throws unless it is a closer
        return new Subject(race, Variant.ONLY_CLOSER, closer, null, null);
    }

    /** The same subject with {@code fault} injected into every run (the harness self-tests). */
    public Subject withFault(HarnessFault fault) {
        return new Subject(race, variant, only, profile, Objects.requireNonNull(fault, "fault"));
    }

    /** A detector no outcome of the race declares (the stray finding of {@link HarnessFault#STRAY_DETECTOR}). */
    public vllmrace.model.detect.ViolationKind strayKind() {
        java.util.Set<vllmrace.model.detect.ViolationKind> declared = java.util.EnumSet.noneOf(vllmrace.model.detect.ViolationKind.class);
        for (RaceOutcome outcome : race.outcomes()) {
            declared.addAll(outcome.declaredDetectors());
        }
        return java.util.Arrays.stream(vllmrace.model.detect.ViolationKind.values()).filter(k -> !declared.contains(k)).findFirst()
                .orElseThrow();
    }

    public FixSet fixes() {
        if (profile != null) {
            return profile.fixes();
        }
        return only == null ? race.fixes(variant) : race.fixesWithOnly(only);
    }

    /** The deployment's configuration: the profile's on vLLM main, the race's own ({@link Race#configuration()}) otherwise. */
    public Configuration configuration() {
        return profile == null ? race.configuration() : profile.configuration();
    }

    /** What this cell must show ({@link Race#expected(Profile)} on vLLM main). */
    public Expectation expected() {
        return profile == null ? race.expected(variant) : race.expected(profile);
    }

    /** How an observation reads for this cell ("racy" / "closed (by #N)" on vLLM main). */
    public String label(Observed observed) {
        return profile == null ? Labels.label(race, variant, observed) : Labels.label(race, profile, observed);
    }

    /** The label of what this cell must show. */
    public String expectedLabel() {
        return profile == null ? Labels.expectedLabel(race, variant) : Labels.expectedLabel(race, profile);
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
        RaceScenario scenario = race.scenario(fixes(), configuration(), point);
        if (fault != null) {
            fault.inject(scenario, strayKind());
        }
        return scenario;
    }

    /** How results name the variant: {@code reported}, ..., {@code only NIXL_PIN_PULL_BLOCKS}, {@code vLLM main, ids not randomized}. */
    public String variantLabel() {
        if (profile != null) {
            return profile.label();
        }
        return only == null ? variant.label() : variant.label() + " " + only.name();
    }

    /** {@code Race [variant]}, and the injected fault if any. */
    public String label() {
        return race.name() + " [" + variantLabel() + (fault == null ? "" : ", " + fault) + "]";
    }
}
