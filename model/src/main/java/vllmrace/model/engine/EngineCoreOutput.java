package vllmrace.model.engine;

/**
 * Mirrors {@code vllm/v1/engine/__init__.py}, {@code EngineCoreOutput}: one step's output for one request.
 * {@code finishReason} is null while the request runs. {@code arrivalTime} is detector-only (the model's
 * identity of the engine request that produced it).
 */
public record EngineCoreOutput(String requestId, long arrivalTime, int newTokens, String finishReason) {
    public boolean finished() {
        return finishReason != null;
    }
}
