package vllmrace.model.detect;

/**
 * What a model detector can observe. Each kind names the invariant of
 * {@code docs/lifecycle.md} §5 it protects, and whether upstream would kill
 * EngineCore there (an {@code assert} or a {@code KeyError} on the busy loop) rather than corrupt state silently.
 */
public enum ViolationKind {
    /** FE1: a second live request under one id reached EngineCore (upstream: overwrite, or "duplicate request id" assert). */
    DUPLICATE_LIVE_REQUEST("FE1", false),
    /** FE2: an ABORT finished a request other than the one the frontend computed it for. */
    ABORT_HIT_WRONG_REQUEST("FE2", false),
    /** FE3: a frontend collector waits for a final output its engine request will never send. */
    ORPHANED_FRONTEND_REQUEST("FE3", false),
    /** FE3, the converse: an engine request runs with no frontend state waiting for it: a response nobody receives. */
    ENGINE_REQUEST_WITHOUT_FRONTEND("FE3", false),
    /** FE4: a ParentRequest outlives all of its children's frontend state. */
    LEAKED_PARENT_REQUEST("FE4", false),
    /** FE4, the converse: a child's frontend state names a parent {@code parent_requests} no longer holds. */
    CHILD_WITHOUT_PARENT_REQUEST("FE4", false),
    /** FE5: a streaming-input session's chunk boundary was merged into a later output before its caller took it. */
    CHUNK_BOUNDARY_LOST("FE5", false),
    /** SC1: {@code _free_request} (and so {@code connector.request_finished}) ran twice for one request. */
    DOUBLE_FREE_REQUEST("SC1", false),
    /** SC1, the converse: a request reached a finished status and {@code _free_request} never ran for it. */
    FINISHED_WITHOUT_FREE_REQUEST("SC1", false),
    /** SC2: {@code _free_blocks} ran for an id no longer in {@code requests} (upstream: KeyError / assert). */
    FREE_BLOCKS_OF_MISSING_REQUEST("SC2", true),
    /** SC3: {@code update_from_output} mutated a request whose status is already finished. */
    OUTPUT_FOR_FINISHED_REQUEST("SC3", false),
    /** SC4: a block was freed while its reference count was already zero. */
    BLOCK_DOUBLE_FREE("SC4", false),
    /** SC4: a block's reference count went below zero. */
    BLOCK_REFCOUNT_UNDERFLOW("SC4", false),
    /** SC4: a transfer wrote into a block its request no longer owns (freed, or reallocated to another request). */
    WRITE_INTO_FREED_BLOCK("SC4", false),
    /**
     * An async store job read a block after it was freed or reallocated: the KV stored under the request's key is not the
     * request's (it may be another request's, served on every later prefix hit). A block an outstanding reader needs
     * must keep {@code ref_cnt >= 1}; for a store whose design frees at once and fences reuse instead, recorded when a
     * transfer of the block's next owner wrote it before the store read it.
     */
    STORE_READ_OF_FREED_BLOCK("SC4", false),
    /**
     * SC4: a remote side's RDMA transfer read a block after its request freed it (or it was reallocated): a decode side's
     * NIXL READ after the prefill side's lease expired decodes on another request's KV, and the client gets 200.
     */
    REMOTE_READ_OF_FREED_BLOCK("SC4", false),
    /**
     * A dispatched step's device write landed in a block that was freed under it, reallocated and filled by another
     * request's async load: that request's KV is silently corrupted. A block may not return to the free queue while a
     * dispatched, unprocessed step can still write it.
     */
    STALE_STEP_WRITE_INTO_REUSED_BLOCK("SC4", false),
    /** SC5: at quiescence, blocks are held by no live request and no pending transfer. */
    BLOCK_LEAK("SC5", false),
    /** SC5: a finished, delay-freed request will never get its releasing event. */
    DELAY_FREED_NEVER_RELEASED("SC5", false),
    /**
     * SC5: a prefill-side lease expired and the worker's reaper did not release it in that poll: the blocks (and a
     * request-plane slot) stay held behind a live lease (NIXL, #58222).
     */
    LEASE_EXPIRED_NOT_RELEASED("SC5", false),
    /**
     * SC5: a request ended while its external-cache lookup still held read locks on the cache server, and nothing will
     * release them before their TTL: those chunks cannot be evicted meanwhile (LMCache MP, #44100).
     */
    LOOKUP_LOCKS_LEAKED("SC5", false),
    /** A connector transfer report for an id the scheduler no longer holds (upstream: assert req_id in self.requests). */
    LATE_TRANSFER_REPORT("CN1", true),
    /** CN1: one request got more than one terminal transfer event. */
    DUPLICATE_TRANSFER_EVENT("CN1", false),
    /**
     * CN1: a transfer completed and its completion never reached the scheduler: only a lease's expiry released the
     * request's blocks (NIXL push: the source blocks held for {@code kv_lease_duration} after the WRITEs finished, #58188).
     */
    SEND_COMPLETION_NEVER_REPORTED("CN1", false),
    /** An aborted request was completed as a success (the connector keeps its blocks pinned for a decode that never comes). */
    ABORT_OVERTAKEN_BY_COMPLETION("#29987", false),
    /**
     * SC6: {@code num_output_placeholders} (sampling positions dispatched but not yet delivered) went below zero: upstream's
     * {@code assert request.num_output_placeholders >= 0} in {@code AsyncScheduler._update_request_with_output} fails and
     * EngineCore dies (#48245).
     */
    OUTPUT_PLACEHOLDER_UNDERFLOW("SC6", true),
    /**
     * CN3: a KV producer's {@code request_finished} for a normally finished request that computed KV (it sampled output)
     * got an empty block list: the hand-off sends nothing, and the decode side never gets the KV (#50297).
     */
    EMPTY_KV_HANDOFF("CN3", false),
    /**
     * CN4: the prefill side holds a finished request's blocks for a remote read that no decode request will ever make
     * (it was cancelled and nothing told the prefill side): only the lease timeout frees them.
     */
    PREFILL_BLOCKS_STRANDED("CN4", false),
    /** An upstream assert on the EngineCore busy loop fired: the engine is dead. */
    ENGINE_ASSERT("engine", true),
    /**
     * LV1, STUCK (bounded liveness): every transfer completed, and k more busy-loop iterations changed nothing, yet a
     * request is neither finished nor schedulable. The engine is up; nothing will ever run it.
     */
    REQUEST_STUCK("LV1", false),
    /**
     * LV2, LEAK (bounded liveness): every transfer completed, and k more busy-loop iterations changed nothing, yet a
     * finished request still holds blocks in {@code requests}: no pending event will release them.
     */
    REQUEST_LEAKED("LV2", false),
    /**
     * LV3: the DP coordinator (and so the client's {@code dp_engines_running()}) says engines are running while no rank
     * steps: {@code wait_for_requests_to_drain} polls until its timeout and never returns.
     */
    DRAIN_NEVER_RETURNS("LV3", false),
    /**
     * LV4: a data-parallel rank runs a step, whose per-step collective needs every rank of its group, while a peer does
     * not step (paused, idle and ignoring the wave): the collective never completes (upstream: the NCCL watchdog).
     */
    DP_STEP_WITHOUT_PEER("LV4", false);

    private final String invariant;
    private final boolean killsEngine;

    ViolationKind(String invariant, boolean killsEngine) {
        this.invariant = invariant;
        this.killsEngine = killsEngine;
    }

    /** The invariant of lifecycle §5 (or the PR) this kind breaks. */
    public String invariant() {
        return invariant;
    }

    /** True where upstream raises on the busy loop, so EngineCore dies. */
    public boolean killsEngine() {
        return killsEngine;
    }
}
