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
 * {@code numOutputPlaceholders} mirrors the async scheduler's count of tokens scheduled but not yet sampled; the
 * preemption fields ({@code num_preemptions}, {@code num_in_flight_tokens} of #47728, {@code num_stale_output_tokens} and
 * {@code drop_stale_output} of #48245) follow {@code request.py} as #48245's backports copy it.
 */
public final class Request {
    private final String requestId;
    private final long arrivalTime;
    private final int numPromptTokens;
    private int maxTokens;
    private final int stopTokenAt;
    /** A streaming-input session's queued chunks (their token budgets): {@code streaming_queue}; null unless resumable. */
    private java.util.ArrayDeque<Integer> streamingQueue;
    private RequestStatus status = RequestStatus.WAITING;
    private int numComputedTokens;
    private int numOutputTokens;
    private int numOutputPlaceholders;
    private int numFreeRequestCalls;
    private int numPreemptions;
    private int numInFlightTokens;
    private int numStaleOutputTokens;
    private boolean dropStaleOutput;

    /** A request with an empty prompt: every step schedules one token (the frontend model's requests). */
    public Request(String requestId, long arrivalTime, int maxTokens) {
        this(requestId, arrivalTime, 0, maxTokens);
    }

    /**
     * @throws IllegalArgumentException for a null or empty id, a negative prompt length or a non-positive
     *     {@code maxTokens}
     */
    public Request(String requestId, long arrivalTime, int numPromptTokens, int maxTokens) {
        this(requestId, arrivalTime, numPromptTokens, maxTokens, NO_STOP_TOKEN);
    }

    /** {@link #stopTokenAt()} of a request that stops by length only. */
    public static final int NO_STOP_TOKEN = 0;

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

    /**
     * Makes this request a streaming-input session ({@code resumable}, #28973) with {@code chunks} queued after the
     * current one, each its token budget.
     *
     * @throws IllegalArgumentException for a budget below 1
     */
    public void queueChunks(java.util.List<Integer> chunks) {
        if (chunks.stream().anyMatch(tokens -> tokens == null || tokens <= 0)) {
            throw new IllegalArgumentException("every chunk of a session has a positive token budget, got " + chunks + " for " + requestId);
        }
        streamingQueue = new java.util.ArrayDeque<>(chunks);
    }

    /**
     * {@code Scheduler._handle_stopped_request} for a session that stopped by length: when a chunk is queued, pop it and
     * run on ({@code _update_request_as_session}: the next chunk's budget; the model keeps the request running instead of
     * re-queueing it to waiting) and return true; false when the stop is final.
     */
    public boolean startNextChunk() {
        if (streamingQueue == null || streamingQueue.isEmpty() || status != RequestStatus.FINISHED_LENGTH_CAPPED) {
            return false;
        }
        maxTokens += streamingQueue.poll();
        status = RequestStatus.RUNNING;
        return true;
    }

    /** The output token that is a stop token (1-based), or {@link #NO_STOP_TOKEN} when the request stops by length only. */
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

    /**
     * A request already finished with {@code status}, as {@code request_finished} sees it: for connector-level checks
     * that run without a scheduler.
     *
     * @throws IllegalArgumentException if {@code status} is not a finished one
     */
    public static Request finished(String requestId, long arrivalTime, int numPromptTokens, int maxTokens, RequestStatus status) {
        if (!Objects.requireNonNull(status, "status").isFinished()) {
            throw new IllegalArgumentException("a finished request needs a finished status, got " + status);
        }
        Request request = new Request(requestId, arrivalTime, numPromptTokens, maxTokens);
        request.setStatus(status);
        return request;
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

    /**
     * Tokens known ({@code num_tokens}: prompt plus delivered output) not yet computed; 0 once the request decodes. After a
     * preemption ({@code num_computed_tokens = 0}) the resume recomputes the prompt and every output token delivered so far.
     */
    int numPromptTokensToCompute() {
        return Math.max(0, numPromptTokens + numOutputTokens - numComputedTokens);
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

    /**
     * {@code request.num_output_placeholders -= len(new_token_ids)} ({@code AsyncScheduler._update_request_with_output}):
     * unclamped, as upstream; the caller checks upstream's {@code assert request.num_output_placeholders >= 0}.
     */
    void removeOutputPlaceholder() {
        numOutputPlaceholders--;
    }

    /** {@code request.num_output_placeholders = 0} (#48245's {@code _preempt_request}). */
    void clearOutputPlaceholders() {
        numOutputPlaceholders = 0;
    }

    /** {@code request.num_preemptions}: how often {@code _preempt_request} ran for this request. */
    public int numPreemptions() {
        return numPreemptions;
    }

    void countPreemption() {
        numPreemptions++;
    }

    /**
     * {@code request.num_in_flight_tokens} (#47728): tokens scheduled in steps whose output has not been processed yet;
     * {@code _update_after_schedule} adds, {@code update_from_output} subtracts.
     */
    public int numInFlightTokens() {
        return numInFlightTokens;
    }

    void addInFlightTokens(int n) {
        numInFlightTokens += n;
    }

    /** {@code request.num_stale_output_tokens} (#48245): the in-flight tokens scheduled before the last preemption. */
    public int numStaleOutputTokens() {
        return numStaleOutputTokens;
    }

    void setNumStaleOutputTokens(int n) {
        numStaleOutputTokens = n;
    }

    /** {@code request.drop_stale_output} (#48245, set by #50297's requires_kv_delivery): stale output is discarded. */
    public boolean dropStaleOutput() {
        return dropStaleOutput;
    }

    void setDropStaleOutput(boolean drop) {
        dropStaleOutput = drop;
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
