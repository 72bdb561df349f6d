package vllmrace.model.engine;

/**
 * Mirrors {@code vllm/v1/engine/__init__.py}, {@code EngineCoreRequest}: what ADD carries to EngineCore.
 * {@code arrivalTime} is the model's logical clock, unique per frontend request; {@code numPromptTokens} is
 * {@code len(prompt_token_ids)}.
 */
public record EngineCoreRequest(String requestId, long arrivalTime, int numPromptTokens, int maxTokens) {
    /** A request with an empty prompt (the frontend model's requests). */
    public EngineCoreRequest(String requestId, long arrivalTime, int maxTokens) {
        this(requestId, arrivalTime, 0, maxTokens);
    }

    public EngineCoreRequest {
        if (requestId == null || requestId.isEmpty()) {
            throw new IllegalArgumentException("request_id must be a non-empty string, got " + (requestId == null ? "null" : "\"\""));
        }
        if (numPromptTokens < 0) {
            throw new IllegalArgumentException("num_prompt_tokens must be >= 0, got " + numPromptTokens + " for request " + requestId);
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
