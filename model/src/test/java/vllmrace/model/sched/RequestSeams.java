package vllmrace.model.sched;

/** Sets a request's status directly, as the scheduler would, for connector tests that have no scheduler. */
public final class RequestSeams {
    private RequestSeams() {
    }

    public static void setStatus(Request request, RequestStatus status) {
        request.setStatus(status);
    }
}
