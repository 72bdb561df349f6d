package vllmrace.races;

/** The two verification engines every race is run under. */
public enum Engine {
    /** Real threads on real hardware, many samples (JCStress 0.16). */
    JCSTRESS("JCStress"),
    /** Bounded model checking of interleavings under sequential consistency (Lincheck 3.7). */
    LINCHECK("Lincheck");

    private final String label;

    Engine(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
