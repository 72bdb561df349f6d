package vllmrace.model.sched;

/**
 * Mirrors {@code vllm/v1/request.py}, {@code RequestStatus}: an IntEnum whose ORDER matters, because
 * upstream decides finishedness by comparison: {@code is_finished(s) <=> s > PREEMPTED}.
 */
public enum RequestStatus {
    WAITING,
    WAITING_FOR_STRUCTURED_OUTPUT_GRAMMAR,
    WAITING_FOR_REMOTE_KVS,
    WAITING_FOR_STREAMING_REQ,
    RUNNING,
    PREEMPTED,
    FINISHED_STOPPED,
    FINISHED_LENGTH_CAPPED,
    FINISHED_ABORTED,
    FINISHED_IGNORED,
    FINISHED_ERROR;

    /** {@code RequestStatus.is_finished}: every status after PREEMPTED. */
    public static boolean isFinished(RequestStatus status) {
        return status.compareTo(PREEMPTED) > 0;
    }

    public boolean isFinished() {
        return isFinished(this);
    }
}
