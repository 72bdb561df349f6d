package vllmrace.model.engine;

/**
 * Mirrors {@code vllm/v1/engine/__init__.py}, {@code EngineCoreRequest}: what ADD carries to EngineCore.
 * {@code arrivalTime} is the model's logical clock, unique per frontend request; {@code numPromptTokens} is
 * {@code len(prompt_token_ids)}. {@code stopTokenAt} stands for {@code sampling_params.stop_token_ids} (and EOS) with
 * the model's output fixed in advance: the request's {@code stopTokenAt}-th output token is a stop token (0: none).
 */
public record EngineCoreRequest(String requestId, long arrivalTime, int numPromptTokens, int maxTokens, int stopTokenAt,
                                java.util.List<Integer> nextChunks) {
    /**
     * A request; {@code nextChunks} are a streaming-input session's later chunks, each its token budget, already queued
     * (upstream: later ADDs of the same id that {@code Scheduler.add_request} appends to {@code streaming_queue}); empty
     * for every other request.
     */
    public EngineCoreRequest(String requestId, long arrivalTime, int numPromptTokens, int maxTokens, int stopTokenAt) {
        this(requestId, arrivalTime, numPromptTokens, maxTokens, stopTokenAt, java.util.List.of());
    }

    /** A request with an empty prompt (the frontend model's requests). */
    public EngineCoreRequest(String requestId, long arrivalTime, int maxTokens) {
        this(requestId, arrivalTime, 0, maxTokens);
    }

    /** A request that never samples a stop token: it stops by length. */
    public EngineCoreRequest(String requestId, long arrivalTime, int numPromptTokens, int maxTokens) {
        this(requestId, arrivalTime, numPromptTokens, maxTokens, 0);
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
        if (stopTokenAt < 0) {
            throw new IllegalArgumentException("stop_token_at must be >= 0 (0: no stop token), got " + stopTokenAt + " for request " + requestId);
        }
        nextChunks = java.util.List.copyOf(java.util.Objects.requireNonNull(nextChunks, "nextChunks"));
        if (nextChunks.stream().anyMatch(tokens -> tokens <= 0)) {
            throw new IllegalArgumentException("every chunk of a session has a positive token budget, got " + nextChunks + " for request " + requestId);
        }
    }

    @Override
    public String toString() {
        return requestId + "@" + arrivalTime;
    }
}
