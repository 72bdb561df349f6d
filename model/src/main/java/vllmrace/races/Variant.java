package vllmrace.races;

/**
 * Which fixes a run of a race's scenario has ON. Reported: every fix except the race's own closers; fixed: every fix,
 * proposals included; vLLM main: the fixes vLLM has merged ({@link vllmrace.model.fix.FixSet#upstreamMain()}), so its
 * verdict answers "does vLLM main still have this race?".
 */
public enum Variant {
    REPORTED,
    FIXED,
    UPSTREAM_MAIN,
    /** One closer of a race with several, alone: every fix but the other closers ({@link Subject#only()} names it). */
    ONLY_CLOSER;

    /** How results and tables name the variant. */
    public String label() {
        return switch (this) {
            case REPORTED -> "reported";
            case FIXED -> "fixed";
            case UPSTREAM_MAIN -> "vLLM main";
            case ONLY_CLOSER -> "only";
        };
    }

    /** The label: display names of the tests read {@code <Race> [<engine>, <variant>]}. */
    @Override
    public String toString() {
        return label();
    }

    /** The nested class name a harness uses for this variant: the constant's name in camel case ({@code OnlyCloser}). */
    public String className() {
        StringBuilder name = new StringBuilder();
        for (String word : name().split("_")) {
            name.append(word.charAt(0)).append(word.substring(1).toLowerCase(java.util.Locale.ROOT));
        }
        return name.toString();
    }
}
