package vllmrace.model.engine;

/**
 * Mirrors {@code vllm/v1/engine/__init__.py}, {@code EngineCoreRequest}: what ADD carries to EngineCore.
 * {@code arrivalTime} is the model's logical clock, unique per frontend request.
 */
public record EngineCoreRequest(String requestId, long arrivalTime, int maxTokens) {
    public EngineCoreRequest {
        if (requestId == null || requestId.isEmpty()) {
            throw new IllegalArgumentException("request_id must be a non-empty string, got " + (requestId == null ? "null" : "\"\""));
        }
        if (maxTokens <= 0) {
            throw new IllegalArgumentException("max_tokens must be positive, got " + maxTokens + " for request " + requestId);
        }
    }

    @Override
    public String toString() {
        return requestId + "@" + arrivalTime;
    }
}
