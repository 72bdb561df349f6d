package vllmrace.model.sched;

/**
 * {@link Scheduler#preemptRequest(String)} was asked to preempt a request it cannot: an id the scheduler does not hold,
 * or a request that is not RUNNING (waiting, preempted or finished). Upstream asserts
 * {@code request.status == RequestStatus.RUNNING} in {@code _preempt_request}; the model refuses before any state changes.
 */
public final class NotPreemptableException extends IllegalStateException {
    private final String requestId;

    public NotPreemptableException(String requestId, String message) {
        super("cannot preempt " + requestId + ": " + message);
        this.requestId = requestId;
    }

    /** The id the caller named. */
    public String requestId() {
        return requestId;
    }
}
