package vllmrace.model.frontend;

/**
 * Mirrors the parts of {@code vllm/sampling_params.py}, {@code SamplingParams}, that the request lifecycle reads:
 * {@code n} (parallel sampling: {@code n > 1} makes a {@link ParentRequest} with {@code n} children),
 * {@code max_tokens} (EngineCore stops the request there) and {@code stop} (stop strings, detected only by the
 * frontend's detokenizer in {@code process_outputs}). The model's stop string "appears" once a request has
 * {@code stopAfterTokens} output tokens; 0 means no stop string. EngineCore never sees this rule, as upstream
 * EngineCore never sees stop strings.
 *
 * @throws IllegalArgumentException for {@code n < 1}, {@code maxTokens < 1} or {@code stopAfterTokens < 0}
 */
public record SamplingParams(int n, int maxTokens, int stopAfterTokens) {
    public SamplingParams {
        if (n < 1) {
            throw new IllegalArgumentException("SamplingParams: n must be at least 1, got " + n);
        }
        if (maxTokens <= 0) {
            throw new IllegalArgumentException("SamplingParams: max_tokens must be positive, got " + maxTokens);
        }
        if (stopAfterTokens < 0) {
            throw new IllegalArgumentException("SamplingParams: stopAfterTokens must be >= 0 (0: no stop string), got " + stopAfterTokens);
        }
    }

    /** One sample, no stop string. */
    public static SamplingParams maxTokens(int maxTokens) {
        return new SamplingParams(1, maxTokens, 0);
    }

    /** The same parameters with {@code n} parallel samples. */
    public SamplingParams withN(int n) {
        return new SamplingParams(n, maxTokens, stopAfterTokens);
    }
}
