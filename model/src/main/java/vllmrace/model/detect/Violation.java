package vllmrace.model.detect;

/** One observation of a detector: what broke, for which request id, and what the model saw. */
public record Violation(ViolationKind kind, String requestId, String detail) {
    @Override
    public String toString() {
        return kind + "[" + kind.invariant() + "](" + requestId + "): " + detail;
    }
}
