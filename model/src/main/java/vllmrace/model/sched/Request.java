package vllmrace.model.sched;

import java.util.Objects;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Mirrors {@code vllm/v1/request.py}, {@code Request}: the engine-side request. Mutated only by the
 * {@link Scheduler} under its lock (upstream: only by the EngineCore busy-loop thread).
 *
 * <p>{@code arrivalTime} is the model's logical clock value handed out by the frontend, unique per
 * frontend request; detectors use it to tell apart two requests that share one {@code requestId}.
 * {@code numOutputPlaceholders} mirrors the async scheduler's count of tokens scheduled but not yet sampled.
 */
public final class Request {
    private final String requestId;
    private final long arrivalTime;
    private final int numPromptTokens;
    private final int maxTokens;
    private final int stopTokenAt;
    private RequestStatus status = RequestStatus.WAITING;
    private int numComputedTokens;
    private int numOutputTokens;
    private int numOutputPlaceholders;
    private int numFreeRequestCalls;

    /** A request with an empty prompt: every step schedules one token (the frontend model's requests). */
    public Request(String requestId, long arrivalTime, int maxTokens) {
        this(requestId, arrivalTime, 0, maxTokens);
    }

    /**
     * @throws IllegalArgumentException for a null or empty id, a negative prompt length or a non-positive
     *     {@code maxTokens}
     */
    public Request(String requestId, long arrivalTime, int numPromptTokens, int maxTokens) {
        this(requestId, arrivalTime, numPromptTokens, maxTokens, 0);
    }

    /**
     * A request whose {@code stopTokenAt}-th output token is a stop token (0: none; {@code sampling_params.stop_token_ids}
     * with the model's output fixed in advance).
     *
     * @throws IllegalArgumentException for an empty id, negative prompt length or stop index, or {@code maxTokens <= 0}
     */
    public Request(String requestId, long arrivalTime, int numPromptTokens, int maxTokens, int stopTokenAt) {
        if (stopTokenAt < 0) {
            throw new IllegalArgumentException("stop_token_at must be >= 0 (0: no stop token), got " + stopTokenAt + " for request " + requestId);
        }
        if (requestId == null || requestId.isEmpty()) {
            throw new IllegalArgumentException("request_id must be a non-empty string, got " + (requestId == null ? "null" : "\"\""));
        }
        if (numPromptTokens < 0) {
            throw new IllegalArgumentException("num_prompt_tokens must be >= 0, got " + numPromptTokens + " for request " + requestId);
        }
        if (maxTokens <= 0) {
            throw new IllegalArgumentException("max_tokens must be positive, got " + maxTokens + " for request " + requestId);
        }
        this.requestId = requestId;
        this.arrivalTime = arrivalTime;
        this.numPromptTokens = numPromptTokens;
        this.maxTokens = maxTokens;
        this.stopTokenAt = stopTokenAt;
    }

    /** The output token that is a stop token (1-based), or 0 when the request stops by length only. */
    public int stopTokenAt() {
        return stopTokenAt;
    }

    public String requestId() {
        return requestId;
    }

    public long arrivalTime() {
        return arrivalTime;
    }

    public int numPromptTokens() {
        return numPromptTokens;
    }

    public int maxTokens() {
        return maxTokens;
    }

    public RequestStatus status() {
        return status;
    }

    void setStatus(RequestStatus status) {
        this.status = Objects.requireNonNull(status, "status");
    }

    /** {@code Request.is_finished()}. */
    public boolean isFinished() {
        UpstreamPins.enter(UpstreamPin.REQUEST_IS_FINISHED);
        return status.isFinished();
    }

    public int numComputedTokens() {
        return numComputedTokens;
    }

    void addComputedTokens(int n) {
        numComputedTokens += n;
    }

    void setNumComputedTokens(int n) {
        numComputedTokens = n;
    }

    /** Prompt tokens not yet computed; 0 once the request decodes. */
    int numPromptTokensToCompute() {
        return Math.max(0, numPromptTokens - numComputedTokens);
    }

    public int numOutputTokens() {
        return numOutputTokens;
    }

    void appendOutputToken() {
        numOutputTokens++;
    }

    public int numOutputPlaceholders() {
        return numOutputPlaceholders;
    }

    void addOutputPlaceholder() {
        numOutputPlaceholders++;
    }

    void removeOutputPlaceholder() {
        if (numOutputPlaceholders > 0) {
            numOutputPlaceholders--;
        }
    }

    /** How often {@code _free_request} ran for this object (contract: at most once). */
    public int numFreeRequestCalls() {
        return numFreeRequestCalls;
    }

    void countFreeRequestCall() {
        numFreeRequestCalls++;
    }

    @Override
    public String toString() {
        return requestId + "@" + arrivalTime + "[" + status + "]";
    }
}
