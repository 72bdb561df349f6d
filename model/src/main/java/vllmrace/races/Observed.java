package vllmrace.races;

/** What a run of one engine on one variant actually showed. */
public enum Observed {
    /** At least one run broke the race's invariant. */
    BUG_FOUND("bug found"),
    /** Runs happened, and none broke the invariant. */
    CLEAN("clean"),
    /** The engine produced no results for this test: never counted as clean. */
    NO_RESULTS("no results"),
    /**
     * The harness or the model failed: a run ended in the scenario's modelling-error outcome (an actor raised, a violation
     * the scenario does not expect), the arbiter threw, a reported scenario already violates in a sequential order, or
     * JCStress reported TEST_ERROR / VM_ERROR / TIMEOUT. Never counted as the race, nor as clean.
     */
    HARNESS_ERROR("harness error"),
    /** Runs happened and none violated, but too few to say clean (a small scenario whose interleavings were not all run). */
    INCOMPLETE("incomplete");

    private final String label;

    Observed(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
