package vllmrace.races;

import java.util.List;

/** The engines every race is judged by, and the variants each one runs. */
public enum Engine {
    /**
     * Every step interleaving of the two actors run on one thread ({@link AllInterleavings}): the complete check at
     * step granularity, and the source of the fix-switch matrix.
     */
    ENUMERATOR("every interleaving", List.of(Variant.REPORTED, Variant.FIXED, Variant.UPSTREAM_MAIN)),
    /** Bounded model checking of interleavings under sequential consistency (Lincheck 3.7). */
    LINCHECK("Lincheck", List.of(Variant.REPORTED, Variant.FIXED, Variant.UPSTREAM_MAIN)),
    /**
     * Real threads on real hardware, many samples (JCStress 0.16). It shows that threads reach the race; the vLLM-main
     * verdict is computed by the two exhaustive-minded engines above.
     */
    JCSTRESS("JCStress", List.of(Variant.REPORTED, Variant.FIXED));

    private final String label;
    private final List<Variant> variants;

    Engine(String label, List<Variant> variants) {
        this.label = label;
        this.variants = variants;
    }

    public String label() {
        return label;
    }

    /** The variants this engine judges. */
    public List<Variant> variants() {
        return variants;
    }
}
