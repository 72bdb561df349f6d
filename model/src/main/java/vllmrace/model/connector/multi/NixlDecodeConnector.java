package vllmrace.model.connector.multi;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.kv.TransferTarget;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * A NIXL-like decode-side connector: {@code vllm/distributed/kv_transfer/kv_connector/v1/nixl/pull_scheduler.py},
 * {@code NixlPullConnectorScheduler} (commit b36ea896; lifecycle §3(c)) with its worker's {@code get_finished}.
 * A request with {@code do_remote_prefill} gets its prompt KV pulled into its blocks: the pull starts at
 * {@code update_state_after_alloc} when this child was offered external tokens (MultiConnector's chosen child;
 * seed 003: the pull runs beside another child's load). Offered 0 tokens (MultiConnector passes 0 to every child it did
 * not choose; or a full local prefix hit), it registers an empty receive instead: {@code _reqs_need_recv[id] =
 * (request, ())}, whose only effect is the worker's {@code send_notif} telling the prefill side to free its blocks;
 * nothing is pulled and, as in the worker's {@code _read_blocks} (it returns after the notification without a
 * transfer handle), nothing is reported in {@code finished_recving}. Either way {@code do_remote_prefill} is cleared:
 * one transfer per request.
 *
 * <p>{@code request_finished} on the decode side: a request that still has {@code do_remote_prefill} (it finished or
 * was aborted before {@code update_state_after_alloc}) registers the same empty receive and returns {@code (False,
 * None)}; otherwise {@code if is_d_node and not is_bidirectional_kv_xfer_enabled: return False, None} — the blocks are never taken over, even with the pull in flight. With {@link Fix#NIXL_PIN_PULL_BLOCKS}
 * (seed 003 direction (2)) a normally finished request (FINISHED_STOPPED / FINISHED_LENGTH_CAPPED, as step 6 of
 * {@code request_finished}) whose pull has not been reported yet is pinned: it returns True and the pull's completion is
 * reported as {@code finished_sending}, once the id was seen in {@code finished_req_ids} (CN2). An aborted request
 * still returns False (step 5); the scheduler's #32255 delay covers it.
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public final class NixlDecodeConnector extends AsyncLoadingChild {
    private final FixSet fixes;
    private final vllmrace.model.connector.KvRole kvRole;
    /** Requests given an empty receive: the prefill side is told to free its blocks, nothing is pulled. */
    private final Set<String> emptyRecvs = new LinkedHashSet<>();

    public NixlDecodeConnector(String name, KvCacheManager kvCacheManager, FixSet fixes) {
        this(name, kvCacheManager, fixes, vllmrace.model.connector.KvRole.KV_BOTH);
    }

    /** As {@link #NixlDecodeConnector(String, KvCacheManager, FixSet)}, configured with {@code kv_role} (e.g. kv_consumer). */
    public NixlDecodeConnector(String name, KvCacheManager kvCacheManager, FixSet fixes, vllmrace.model.connector.KvRole kvRole) {
        super(name, kvCacheManager);
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.kvRole = Objects.requireNonNull(kvRole, "kvRole");
    }

    /**
     * Set-up: {@code requestId} arrives with {@code kv_transfer_params.do_remote_prefill}: its first {@code numTokens}
     * prompt tokens are on the prefill instance (the pull starts at {@code update_state_after_alloc}; one per request).
     *
     * @throws IllegalArgumentException for a token count below 1 (nothing changes)
     */
    public void remotePrefill(String requestId, int numTokens) {
        offerPrefix(requestId, numTokens, "remote prefill");
    }

    /** {@code update_state_after_alloc}: the pull into {@code blockIds}, or an empty receive for 0 external tokens. */
    /**
     * By default {@code kv_both}, as NIXL P/D deployments configure both sides (the NIXL usage guide and upstream's MultiConnector
     * example: {@code {"kv_connector":"NixlConnector","kv_role":"kv_both"}}): a consumer here, and by the base class's
     * default ({@code is_kv_producer}) a connector that requires KV delivery. NIXL does not override either.
     */
    @Override
    public vllmrace.model.connector.KvRole kvRole() {
        return kvRole;
    }

    @Override
    public synchronized void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        UpstreamPins.enter(UpstreamPin.NIXL_PULL_UPDATE_STATE_AFTER_ALLOC);
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
        if (numExternalTokens == 0) {
            if (takeOffer(request.requestId())) {
                emptyRecvs.add(request.requestId());
            }
            return;
        }
        super.updateStateAfterAlloc(request, blockIds, numExternalTokens);
    }

    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        UpstreamPins.enter(UpstreamPin.NIXL_PULL_REQUEST_FINISHED);
        countRequestFinished(request, blockIds);
        if (takeOffer(request.requestId())) {
            emptyRecvs.add(request.requestId()); // "update_state_after_alloc must not have been called"
            return RequestFinishedResult.FREE_NOW;
        }
        AsyncTransfer pull = loads.get(request.requestId());
        boolean normalFinish = request.status() == RequestStatus.FINISHED_STOPPED
                || request.status() == RequestStatus.FINISHED_LENGTH_CAPPED;
        if (pull != null && normalFinish && fixes.isOn(Fix.NIXL_PIN_PULL_BLOCKS)) {
            pull.pinned = true; // _reqs_need_send[id] = now + decoder_kv_blocks_ttl
            return new RequestFinishedResult(true, Map.of("do_remote_decode", Boolean.FALSE));
        }
        return RequestFinishedResult.FREE_NOW; // is_d_node and not is_bidirectional_kv_xfer_enabled
    }

    /**
     * Completed pulls: {@code done_recving}, or with seed 003 (2) a pinned one as {@code done_sending} (after CN2); a
     * failed pull's blocks in {@code invalid_block_ids}, in the same output.
     */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        seenFinished.addAll(Objects.requireNonNull(finishedReqIds, "finishedReqIds"));
        Set<String> recving = new LinkedHashSet<>();
        Set<String> sending = new LinkedHashSet<>();
        Set<Integer> invalid = new LinkedHashSet<>();
        for (Iterator<AsyncTransfer> it = loads.values().iterator(); it.hasNext(); ) {
            AsyncTransfer pull = it.next();
            if (!pull.done) {
                continue;
            }
            if (!pull.pinned) {
                recving.add(pull.requestId);
                invalid.addAll(invalidBlocksOf(pull));
                it.remove();
            } else if (seenFinished.contains(pull.requestId)) {
                sending.add(pull.requestId);
                invalid.addAll(invalidBlocksOf(pull));
                it.remove();
            }
        }
        return new KvConnectorOutput(sending, recving, invalid);
    }

    /**
     * Worker: the NIXL READ of {@code requestId} completes: it writes the blocks it was started into.
     *
     * @throws UnknownTransferException if no pull of that id is in flight (a duplicate or unknown report; nothing changes)
     */
    public void completePull(String requestId) {
        completeLoadOf(requestId, "pull");
    }

    /**
     * Worker: the NIXL READ of {@code requestId} fails ({@code _handle_failed_transfer}): nothing is written; the pull is
     * reported done with its blocks invalid.
     *
     * @throws UnknownTransferException if no pull of that id is in flight (a duplicate or unknown report; nothing changes)
     */
    public void failPull(String requestId) {
        failLoadOf(requestId, "pull");
    }

    /** Worker: every in-flight pull completes now. Returns how many did. */
    public synchronized int finishInFlightTransfers() {
        return completeAll(loads.values());
    }

    /** True while a pull of {@code requestId} is in flight (not yet landed). */
    public synchronized boolean isPullInFlight(String requestId) {
        AsyncTransfer pull = loads.get(requestId);
        return pull != null && !pull.done;
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return loads.containsKey(requestId);
    }

    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        List<TransferTarget> targets = new ArrayList<>();
        loads.values().stream().filter(p -> !p.done).forEach(p -> targets.add(p.target));
        return targets;
    }

    /** Whether {@code requestId} got an empty receive (the worker's {@code send_notif} to the prefill side, no pull). */
    public synchronized boolean notifiedWithoutPull(String requestId) {
        return emptyRecvs.contains(requestId);
    }

    public synchronized boolean isIdle() {
        return loads.isEmpty();
    }
}
