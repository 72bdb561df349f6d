package vllmrace.model.fix;

/**
 * The upstream fixes, each a named switch the model reads at the one place its code path differs.
 * "Reported" behaviour of a race = its fix OFF; "fixed" = ON. Constants name the upstream change.
 */
public enum Fix {
    /** #15326 (hidva): AsyncLLM.abort computes the ids, sends ABORT, and only then drops frontend state. */
    ORDERED_ABORT("#15326", "AsyncLLM.abort sends ABORT to EngineCore before dropping frontend state"),
    /** #33377: update_from_output skips {@code request is None or request.is_finished()}. */
    IS_FINISHED_GUARD("#33377", "Scheduler.update_from_output skips requests that are already finished"),
    /** #29987: pending aborts are applied right before update_from_output. */
    EAGER_ABORTS("#29987", "EngineCore applies queued aborts just before update_from_output"),
    /** #32255 (with the review's refinement): delay the free of an aborted async load unless its recv arrived. */
    DELAY_FREE_ABORTED_LOAD("#32255", "finish_requests delays the free of an aborted WAITING_FOR_REMOTE_KVS request unless finished_recving already arrived"),
    /** #25067: finish_requests skips requests that are already finished. */
    SKIP_ABORT_OF_FINISHED("#25067", "Scheduler.finish_requests skips already-finished requests");

    private final String upstream;
    private final String description;

    Fix(String upstream, String description) {
        this.upstream = upstream;
        this.description = description;
    }

    /** The upstream PR or report that introduced (or proposed) this fix. */
    public String upstream() {
        return upstream;
    }

    public String description() {
        return description;
    }
}
