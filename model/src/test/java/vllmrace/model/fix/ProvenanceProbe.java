package vllmrace.model.fix;

/** Test access to {@link Provenance}'s package-private factories. */
public final class ProvenanceProbe {
    private ProvenanceProbe() {
    }

    /** A merged fix that names no file version: must throw. */
    public static Provenance mergedWithout() {
        return Provenance.merged("#1", "scheduler.py after the PR", "evidence");
    }
}
