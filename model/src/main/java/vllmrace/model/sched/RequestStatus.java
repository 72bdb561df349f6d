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

    /**
     * {@code RequestStatus.get_finished_reason} (vllm/v1/request.py, {@code _FINISHED_REASON_MAP}): "stop", "length"
     * (an ignored request too, as in the OpenAI API), "abort", "error"; null for a status that is not finished.
     */
    public static String getFinishedReason(RequestStatus status) {
        return switch (status) {
            case FINISHED_STOPPED -> "stop";
            case FINISHED_LENGTH_CAPPED, FINISHED_IGNORED -> "length";
            case FINISHED_ABORTED -> "abort";
            case FINISHED_ERROR -> "error";
            default -> null;
        };
    }
}
