package vllmrace.model.frontend;

/** A request id that is null or empty: rejected before any state changes. */
public final class InvalidRequestIdException extends IllegalArgumentException {
    public InvalidRequestIdException(String operation, String requestId) {
        super(operation + ": request id must be a non-empty string, got " + (requestId == null ? "null" : "\"\""));
    }

    static String check(String operation, String requestId) {
        if (requestId == null || requestId.isEmpty()) {
            throw new InvalidRequestIdException(operation, requestId);
        }
        return requestId;
    }
}
