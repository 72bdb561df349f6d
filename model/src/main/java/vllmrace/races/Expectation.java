package vllmrace.races;

/** The verdict a variant must get (README, "Three verdicts"). */
public enum Expectation {
    /** The reproducer must observe the race; a run that does not fails the build. */
    BUG_FOUND,
    /** The race must never be observed, and the run must have produced results. */
    CLEAN,
    /** The variant is not part of the race's catalogue entry (a positive control has no reported variant). */
    NOT_APPLICABLE;

    public String label() {
        return switch (this) {
            case BUG_FOUND -> "bug found";
            case CLEAN -> "clean";
            case NOT_APPLICABLE -> "—";
        };
    }
}
