package vllmrace.races;

import java.util.Objects;

/**
 * One cell of the verdict table: a subject (a race under a variant's fixes), an engine, what was observed and the
 * measured figures behind it. {@code runs} counts enumerated schedules, Lincheck invocations or JCStress samples;
 * {@code violatingRuns} those that broke the invariant. A {@link Observed#HARNESS_ERROR} names, in {@code detail},
 * what broke and where known the schedule.
 */
public record Verdict(Subject subject, Engine engine, Observed observed, long runs, long violatingRuns,
                      String figures, String detail) {

    public Verdict {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(observed, "observed");
    }

    public Race race() {
        return subject.race();
    }

    public Variant variant() {
        return subject.variant();
    }

    public Expectation expected() {
        return subject.expected();
    }

    /** True when the observation is the catalogue's expectation for this variant. */
    public boolean asExpected() {
        return switch (expected()) {
            case BUG_FOUND -> observed == Observed.BUG_FOUND;
            case CLEAN -> observed == Observed.CLEAN;
            case NOT_APPLICABLE -> observed != Observed.HARNESS_ERROR;
        };
    }

    /** The observation as the results read it ("racy" / "closed (by #N)" on vLLM main). */
    public String observedLabel() {
        return subject.label(observed);
    }

    /** The expectation as the results read it. */
    public String expectedLabel() {
        return subject.expectedLabel();
    }

    /** One line naming the race, engine, variant, expectation and observation. */
    public String headline() {
        return race().name() + " [" + engine.label() + ", " + subject.variantLabel() + "]: expected " + expectedLabel()
                + ", observed " + observedLabel() + " (" + figures + ")";
    }
}
