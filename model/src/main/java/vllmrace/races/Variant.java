package vllmrace.races;

/**
 * Which fixes a run of a race's scenario has ON. Reported: every fix except the race's own closers; fixed: every fix,
 * proposals included; vLLM main: the fixes vLLM has merged ({@link vllmrace.model.fix.FixSet#upstreamMain()}), so its
 * verdict answers "does vLLM main still have this race?".
 */
public enum Variant {
    REPORTED("reported", "Reported"),
    FIXED("fixed", "Fixed"),
    UPSTREAM_MAIN("vLLM main", "UpstreamMain"),
    /** One closer of a race with several, alone: every fix but the other closers ({@link Subject#only()} names it). */
    ONLY_CLOSER("only", "OnlyCloser");

    private final String label;
    private final String className;

    Variant(String label, String className) {
        this.label = label;
        this.className = className;
    }

    /** How results and tables name the variant. */
    public String label() {
        return label;
    }

    /** The label: display names of the tests read {@code <Race> [<engine>, <variant>]}. */
    @Override
    public String toString() {
        return label;
    }

    /** The nested class name a harness uses for this variant. */
    public String className() {
        return className;
    }
}
