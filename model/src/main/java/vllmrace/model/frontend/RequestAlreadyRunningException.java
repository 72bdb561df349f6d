package vllmrace.model.frontend;

/**
 * {@code OutputProcessor.add_request}'s {@code ValueError("Request id ... already running.")}, which the
 * OpenAI server maps to HTTP 400 (#11036): the caller re-used an id the frontend still tracks.
 */
public final class RequestAlreadyRunningException extends IllegalStateException {
    public RequestAlreadyRunningException(String requestId) {
        super("Request id " + requestId + " already running.");
    }
}
