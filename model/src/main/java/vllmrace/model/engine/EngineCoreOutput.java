package vllmrace.model.engine;

/**
 * Mirrors {@code vllm/v1/engine/__init__.py}, {@code EngineCoreOutput}: one step's output for one request.
 * {@code finishReason} is null while the request runs; a streaming-input session's chunk ends with a finish reason on an
 * output that is not {@code finished} (the scheduler captures the reason before {@code _handle_stopped_request} starts
 * the next chunk). {@code arrivalTime} is detector-only (the model's identity of the engine request that produced it).
 */
public record EngineCoreOutput(String requestId, long arrivalTime, int newTokens, String finishReason, boolean finished) {
    /** An output that is final exactly when it carries a finish reason (every request but a session's chunk end). */
    public EngineCoreOutput(String requestId, long arrivalTime, int newTokens, String finishReason) {
        this(requestId, arrivalTime, newTokens, finishReason, finishReason != null);
    }

    public EngineCoreOutput {
        if (finished && finishReason == null) {
            throw new IllegalArgumentException("a finished output carries its finish reason: " + requestId);
        }
    }
}
