package vllmrace.model.sched;

import java.util.Objects;

/**
 * Mirrors {@code vllm/v1/request.py}, {@code Request}: the engine-side request. Mutated only by the
 * {@link Scheduler} under its lock (upstream: only by the EngineCore busy-loop thread).
 *
 * <p>{@code arrivalTime} is the model's logical clock value handed out by the frontend, unique per
 * frontend request; detectors use it to tell apart two requests that share one {@code requestId}.
 */
public final class Request {
    private final String requestId;
    private final long arrivalTime;
    private final int maxTokens;
    private RequestStatus status = RequestStatus.WAITING;
    private int numComputedTokens;
    private int numOutputTokens;
    private int numFreeRequestCalls;

    public Request(String requestId, long arrivalTime, int maxTokens) {
        if (requestId == null || requestId.isEmpty()) {
            throw new IllegalArgumentException("request_id must be a non-empty string, got " + (requestId == null ? "null" : "\"\""));
        }
        if (maxTokens <= 0) {
            throw new IllegalArgumentException("max_tokens must be positive, got " + maxTokens + " for request " + requestId);
        }
        this.requestId = requestId;
        this.arrivalTime = arrivalTime;
        this.maxTokens = maxTokens;
    }

    public String requestId() {
        return requestId;
    }

    public long arrivalTime() {
        return arrivalTime;
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

    public boolean isFinished() {
        return status.isFinished();
    }

    public int numComputedTokens() {
        return numComputedTokens;
    }

    void addComputedTokens(int n) {
        numComputedTokens += n;
    }

    public int numOutputTokens() {
        return numOutputTokens;
    }

    void appendOutputToken() {
        numOutputTokens++;
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
