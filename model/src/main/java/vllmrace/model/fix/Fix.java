package vllmrace.model.fix;

/**
 * The upstream fixes, each a named switch the model reads at the one place its code path differs.
 * "Reported" behaviour of a race = its fix OFF; "fixed" = ON. Constants name the upstream change.
 */
public enum Fix {
    /** #15326 (hidva): AsyncLLM.abort computes the ids, sends ABORT, and only then drops frontend state. */
    ORDERED_ABORT("#15326", "AsyncLLM.abort sends ABORT to EngineCore before dropping frontend state"),
    /** #33377: update_from_output skips {@code request is None or request.is_finished()}. Closes DoubleFreeOnAbortedAsyncSave. */
    IS_FINISHED_GUARD("#33377", "Scheduler.update_from_output skips requests that are already finished"),
    /** #29987: pending aborts are applied right before update_from_output. Closes AbortLosesToFinalStep. */
    EAGER_ABORTS("#29987", "EngineCore applies queued aborts just before update_from_output"),
    /**
     * #32255: finish_requests delays the free of an aborted WAITING_FOR_REMOTE_KVS request (its async load still
     * writes into the blocks), and _update_from_kv_xfer_finished frees a finished request on its finished_recving.
     * Closes AbortedLoadFreesBlocks. Without {@link #DELAY_FREE_UNLESS_RECVED} this is the PR's first, naive flag.
     */
    DELAY_FREE_ABORTED_LOAD("#32255", "finish_requests delays the free of an aborted WAITING_FOR_REMOTE_KVS request until its finished_recving"),
    /**
     * #32255 review (cursor bot), in the merged code: no delay when finished_recving already arrived, since no
     * second report will come. Closes AbortedLoadLeak; only matters with {@link #DELAY_FREE_ABORTED_LOAD} ON.
     */
    DELAY_FREE_UNLESS_RECVED("#32255 review", "finish_requests does not delay the free when the request's finished_recving already arrived"),
    /** #25067: finish_requests skips requests that are already finished. Closes AbortOfFinishedDelayFreed. */
    SKIP_ABORT_OF_FINISHED("#25067", "Scheduler.finish_requests skips already-finished requests"),
    /**
     * #15326's {@code _handle_finished_reqs} (hypothesis, reference §1(d)) / #23697: the output handler sends ABORT for
     * {@code reqs_to_abort} (requests the frontend finished on a stop string) before dropping their state. Closes
     * StopStringLateAbort (as does {@link #UNIQUE_INTERNAL_IDS}).
     */
    ORDERED_FINISH_ABORT("#15326 / #23697", "the output handler sends ABORT for reqs_to_abort before dropping their frontend state"),
    /**
     * #27987: EngineCore sees internal ids (external id + a suffix) and OutputProcessor maps external → internal ids;
     * abort by external id resolves to the internal ones. Closes DelayFreedIdReuse, StopStringLateAbort and
     * DuplicateIdAbortWindow.
     */
    UNIQUE_INTERNAL_IDS("#27987", "frontend-provided request ids get a unique suffix; EngineCore never sees one id twice"),
    /**
     * Seed 003, fix direction (1): MultiConnector mirrors {@code _extra_async_saves} for loads; every child with an async
     * load of a request in flight is counted, and finished_recving is reported once, when the last load completes.
     * Closes LateLoadCompletionUnion (one of its sufficient directions).
     */
    MULTI_CONNECTOR_LOAD_DEDUP("seed 003 (1)", "MultiConnector reports finished_recving once, after the last in-flight async load of the request"),
    /**
     * Seed 003, fix direction (2): the NIXL decode side pins the blocks of a normally finished request whose pull is still
     * in flight ({@code request_finished} returns True) and reports the late completion as finished_sending.
     * Closes PullIntoFreedBlocks.
     */
    NIXL_PIN_PULL_BLOCKS("seed 003 (2)", "NIXL decode side pins blocks while a pull is in flight and reports its late completion as finished_sending"),
    /**
     * Seed 003, fix direction (3), defence in depth: _update_from_kv_xfer_finished warns and skips a transfer report for an
     * id no longer in {@code requests} (and a finished_recving for a request that no longer waits for it) instead of
     * asserting.
     */
    SCHEDULER_SKIP_LATE_REPORT("seed 003 (3)", "Scheduler warns and skips late transfer reports instead of asserting"),
    /**
     * #46240, fixed on the connector side as the maintainers ask (njhill, #53079 review: "There should not be multiple
     * completion events even in the case of abort"; orozery, #46304: keep calling request_finished immediately on abort):
     * while a request's async load is in flight (as the scheduler side knows it: started at update_state_after_alloc, not
     * yet seen in update_connector_output's finished_recving), MultiConnector.request_finished hands the other children
     * no blocks, since those blocks hold no complete KV yet. No child starts a save, so an aborted load ends with one
     * terminal event, its finished_recving. Closes RecvAndSendForAbortedLoad.
     */
    NO_SAVE_WHILE_LOADING("#46240", "MultiConnector.request_finished gives the other children no blocks to save while the request's async load is in flight");

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
