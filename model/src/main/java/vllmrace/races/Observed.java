package vllmrace.races;

/** What a run of one engine on one variant actually showed. */
public enum Observed {
    /** At least one run broke the race's invariant. */
    BUG_FOUND("bug found"),
    /** Runs happened, and none broke the invariant. */
    CLEAN("clean"),
    /** The engine produced no results for this test: never counted as clean. */
    NO_RESULTS("no results"),
    /** The harness itself failed (JCStress TEST_ERROR / VM_ERROR / TIMEOUT, or an unexpected exception). */
    HARNESS_ERROR("harness error");

    private final String label;

    Observed(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
