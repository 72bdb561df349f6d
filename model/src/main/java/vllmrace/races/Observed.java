package vllmrace.races;

/** What a run of one engine on one variant actually showed. */
public enum Observed {
    /** At least one run broke the race's invariant. */
    BUG_FOUND,
    /** Runs happened, and none broke the invariant. */
    CLEAN,
    /** The engine produced no results for this test: never counted as clean. */
    NO_RESULTS,
    /**
     * The harness or the model failed: a run ended in the scenario's modelling-error outcome (an actor raised, a violation
     * the scenario does not expect), the arbiter threw, a reported scenario already violates in a sequential order, or
     * JCStress reported TEST_ERROR / VM_ERROR / TIMEOUT. Never counted as the race, nor as clean.
     */
    HARNESS_ERROR,
    /** Runs happened and none violated, but too few to say clean (a small scenario whose interleavings were not all run). */
    INCOMPLETE;

    public String label() {
        return switch (this) {
            case BUG_FOUND -> "bug found";
            case CLEAN -> "clean";
            case NO_RESULTS -> "no results";
            case HARNESS_ERROR -> "harness error";
            case INCOMPLETE -> "incomplete";
        };
    }
}
