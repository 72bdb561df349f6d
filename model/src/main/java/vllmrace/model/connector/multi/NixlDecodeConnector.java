package vllmrace.model.connector.multi;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.ViolationKind;
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
    /** Remote TP ranks a request's prefill side has, one NIXL READ handle each (heterogeneous TP); 1 unless set. */
    private final Map<String, Integer> remoteRanks = new HashMap<>();
    /** {@code _recving_transfers}: each started pull's handles, until none is in progress. */
    private final Map<String, Handle[]> recvingTransfers = new HashMap<>();
    /** {@code _recving_metadata}: a started pull's local blocks, popped when {@code get_finished} reports it. */
    private final Map<String, List<Integer>> recvingMetadata = new HashMap<>();
    /** {@code _failed_recv_reqs} before #56104 (one entry per failed handle), {@code _recv_failures} after it. */
    private final Set<String> failedRecvReqs = new LinkedHashSet<>();
    /** Requests whose prefill engine this worker never handshaked, and whose handshake will fail (set-up). */
    private final Set<String> handshakeFails = new LinkedHashSet<>();
    /** Pulls and notifications waiting for the background handshake with their prefill engine. */
    private final Set<String> pendingHandshake = new LinkedHashSet<>();

    /** A NIXL READ handle's {@code check_xfer_state}: in progress, done or failed, and released once processed. */
    private enum Handle { PROC, DONE, ERR, RELEASED }

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
        remotePrefill(requestId, numTokens, 1);
    }

    /**
     * As {@link #remotePrefill(String, int)} from a prefill instance with {@code remoteRanks} TP ranks more than this
     * side's: the pull reads each rank's share with its own handle ({@code _read_blocks_for_req}), and each handle
     * writes into every one of the request's blocks.
     *
     * @throws IllegalArgumentException for a token count or a rank count below 1 (nothing changes)
     */
    public synchronized void remotePrefill(String requestId, int numTokens, int remoteRanks) {
        if (remoteRanks < 1) {
            throw new IllegalArgumentException("a remote prefill needs at least one remote rank, got " + remoteRanks);
        }
        offerPrefix(requestId, numTokens, "remote prefill");
        this.remoteRanks.put(requestId, remoteRanks);
    }

    /**
     * Set-up: this worker has no agent yet for the prefill engine of {@code requestId} ({@code remote_engine_id not in
     * self._remote_agents}), and the handshake it will start fails (e.g. a block-size mismatch): the pull, or the
     * notification of an empty receive, waits on the handshake thread until {@link #failPendingHandshakes}.
     */
    public synchronized void handshakeWillFail(String requestId) {
        handshakeFails.add(Objects.requireNonNull(requestId, "requestId"));
    }

    /**
     * Handshake thread: every pending handshake fails; its future's callback runs {@code _handle_failed_transfer(req_id,
     * None)}: the id joins {@code _failed_recv_reqs} (a pull's blocks were never written: its failure is reported with
     * them invalid). An empty receive's id joins it too, as the worker tracks it like a receive before #57570. Returns how
     * many failed; with none pending the thread has nothing to do.
     */
    public synchronized int failPendingHandshakes() {
        for (String id : pendingHandshake) {
            AsyncTransfer pull = loads.get(id);
            if (pull != null) {
                pull.done = true;
                pull.failed = true;
            }
            failedRecvReqs.add(id);
        }
        int n = pendingHandshake.size();
        pendingHandshake.clear();
        return n;
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
                registerEmptyRecv(request.requestId());
            }
            return;
        }
        super.updateStateAfterAlloc(request, blockIds, numExternalTokens);
        AsyncTransfer pull = loads.get(request.requestId());
        if (pull != null && !recvingTransfers.containsKey(request.requestId())) { // start_load_kv
            Handle[] handles = new Handle[remoteRanks.getOrDefault(request.requestId(), 1)];
            remoteRanks.remove(request.requestId());
            java.util.Arrays.fill(handles, Handle.PROC);
            recvingMetadata.put(request.requestId(), pull.target.blockIds()); // "always store metadata for failure recovery"
            if (handshakeFails.contains(request.requestId())) {
                pendingHandshake.add(request.requestId()); // _background_nixl_handshake; the READ waits for it
            } else {
                recvingTransfers.put(request.requestId(), handles);
            }
        }
    }

    /**
     * An empty receive ({@code _reqs_need_recv[id] = (request, [])}): the worker tells the prefill side to free its blocks.
     * Before #57570 {@code start_load_kv} stores its metadata like a receive's ("always store metadata for failure
     * recovery"); with {@link Fix#NOTIF_ONLY_NOT_RECV_TRACKED} only a receive that awaits KV or has local blocks is
     * stored. Without an agent for its prefill engine the notification waits for the handshake.
     */
    private void registerEmptyRecv(String requestId) {
        emptyRecvs.add(requestId);
        if (!fixes.isOn(Fix.NOTIF_ONLY_NOT_RECV_TRACKED)) {
            recvingMetadata.put(requestId, List.of());
        }
        if (handshakeFails.contains(requestId)) {
            pendingHandshake.add(requestId);
        }
    }

    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        UpstreamPins.enter(UpstreamPin.NIXL_PULL_REQUEST_FINISHED);
        countRequestFinished(request, blockIds);
        if (takeOffer(request.requestId())) {
            registerEmptyRecv(request.requestId()); // "update_state_after_alloc must not have been called"
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
     * {@code get_finished} on the decode worker (nixl/base_worker.py): {@code _pop_done_transfers} checks each pull's
     * handles; a pull with none in progress is done. A failed handle, before #56104 (base_worker.py@00bd5131), runs
     * {@code _handle_failed_transfer} at once: the pull's blocks go to {@code invalid_block_ids} while its metadata is
     * there, and the id joins {@code done_recving} in this poll even while a sibling handle still writes. With
     * {@link Fix#DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP} (base_worker.py@d80b52aa) the failure waits in
     * {@code _recv_failures} until every handle stopped, and is dropped if the metadata is gone. Each reported id pops
     * its metadata: a second report of one pull finds none, and {@code assert meta is not None} kills the worker (before
     * #54518); with {@link Fix#FAILED_RECV_REPORTED_ONCE} the repeat is dropped. A pinned pull (seed 003 (2)) is
     * reported as {@code done_sending} once done and its id was seen (CN2).
     */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        UpstreamPins.enter(UpstreamPin.NIXL_WORKER_GET_FINISHED);
        UpstreamPins.enter(UpstreamPin.NIXL_WORKER_POP_DONE_TRANSFERS); // inlined below
        UpstreamPins.enter(UpstreamPin.NIXL_WORKER_HANDLE_FAILED_TRANSFER); // inlined below
        seenFinished.addAll(Objects.requireNonNull(finishedReqIds, "finishedReqIds"));
        boolean defer = fixes.isOn(Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP);
        Set<String> recving = new LinkedHashSet<>();
        Set<String> sending = new LinkedHashSet<>();
        Set<Integer> invalid = new LinkedHashSet<>();
        for (Iterator<AsyncTransfer> it = loads.values().iterator(); it.hasNext(); ) {
            AsyncTransfer pull = it.next();
            if (pull.pinned) {
                if (pull.done && seenFinished.contains(pull.requestId)) {
                    sending.add(pull.requestId);
                    invalid.addAll(invalidBlocksOf(pull));
                    recvingTransfers.remove(pull.requestId);
                    recvingMetadata.remove(pull.requestId);
                    it.remove();
                }
                continue;
            }
            Handle[] handles = recvingTransfers.get(pull.requestId);
            if (handles == null) { // no READ posted: its handshake is pending, or failed (then reported as a failure below)
                if (pull.done) {
                    it.remove();
                }
                continue;
            }
            for (int h = 0; h < handles.length; h++) {
                if (handles[h] == Handle.ERR) { // _handle_failed_transfer
                    if (!defer && recvingMetadata.containsKey(pull.requestId)) {
                        invalid.addAll(recvingMetadata.get(pull.requestId));
                    }
                    failedRecvReqs.add(pull.requestId);
                }
                if (handles[h] != Handle.PROC) {
                    handles[h] = Handle.RELEASED;
                }
            }
            if (pull.done) { // "Only report request as completed when all transfers are done."
                recving.add(pull.requestId);
                recvingTransfers.remove(pull.requestId);
                it.remove();
            }
        }
        Set<String> failed = new LinkedHashSet<>();
        for (Iterator<String> it = failedRecvReqs.iterator(); it.hasNext(); ) {
            String id = it.next();
            if (defer && recvingMetadata.containsKey(id) && recvingTransfers.containsKey(id)) {
                continue; // #56104: a handle of it still runs: wait
            }
            it.remove();
            if (!defer || recvingMetadata.containsKey(id)) {
                failed.add(id); // before #56104 the queue drains at once; after it, every handle stopped (else: retired, dropped)
            }
        }
        recving.addAll(failed);
        for (Iterator<String> it = recving.iterator(); it.hasNext(); ) {
            String id = it.next();
            List<Integer> meta = recvingMetadata.remove(id);
            if (meta == null) {
                if (!fixes.isOn(Fix.FAILED_RECV_REPORTED_ONCE)) {
                    kvCacheManager.violations().record(ViolationKind.ENGINE_ASSERT, id, "NIXL worker get_finished: assert meta is not None ("
                            + id + " not found in recving_metadata list) raises out of worker_busy_loop, EngineCore dies");
                }
                it.remove(); // reported already: not again
            } else if (failed.contains(id)) {
                invalid.addAll(meta); // #56104: blocks invalidated once every handle stopped (before it: at the ERR, or here for a failed handshake)
            }
        }
        return new KvConnectorOutput(sending, recving, invalid);
    }

    /**
     * Worker: every handle of the NIXL READ of {@code requestId} still in progress completes: each writes its share of
     * the blocks the pull was started into.
     *
     * @throws UnknownTransferException if no handle of a pull of that id is in progress (nothing changes)
     */
    public synchronized void completePull(String requestId) {
        for (int h : handlesInProgress(requestId)) {
            completeHandle(requestId, h);
        }
    }

    /**
     * Worker: every handle of the NIXL READ of {@code requestId} still in progress fails ({@code check_xfer_state} ERR):
     * nothing more is written.
     *
     * @throws UnknownTransferException if no handle of a pull of that id is in progress (nothing changes)
     */
    public synchronized void failPull(String requestId) {
        for (int h : handlesInProgress(requestId)) {
            failHandle(requestId, h);
        }
    }

    /**
     * Worker: handle {@code handle} of the pull of {@code requestId} is DONE: its RDMA writes land in the pull's blocks.
     *
     * @throws UnknownTransferException if that handle is not in progress (nothing changes)
     */
    public synchronized void completeHandle(String requestId, int handle) {
        AsyncTransfer pull = handleInProgress(requestId, handle);
        kvCacheManager.completeWrite(pull.target);
        stop(pull, handle, Handle.DONE);
    }

    /**
     * Worker: handle {@code handle} of the pull of {@code requestId} is ERR: it writes nothing more. Its siblings go on:
     * posted RDMA writes cannot be aborted.
     *
     * @throws UnknownTransferException if that handle is not in progress (nothing changes)
     */
    public synchronized void failHandle(String requestId, int handle) {
        AsyncTransfer pull = handleInProgress(requestId, handle);
        pull.failed = true;
        stop(pull, handle, Handle.ERR);
    }

    private AsyncTransfer handleInProgress(String requestId, int handle) {
        AsyncTransfer pull = loads.get(Objects.requireNonNull(requestId, "requestId"));
        Handle[] handles = recvingTransfers.get(requestId);
        if (pull == null || handles == null || handle < 0 || handle >= handles.length || handles[handle] != Handle.PROC) {
            throw new UnknownTransferException(name() + ": handle " + handle + " of a pull of request " + requestId + " is not in progress");
        }
        return pull;
    }

    private List<Integer> handlesInProgress(String requestId) {
        Handle[] handles = recvingTransfers.get(Objects.requireNonNull(requestId, "requestId"));
        List<Integer> proc = new ArrayList<>();
        for (int h = 0; handles != null && h < handles.length; h++) {
            if (handles[h] == Handle.PROC) {
                proc.add(h);
            }
        }
        if (proc.isEmpty()) {
            throw new UnknownTransferException(name() + ": no pull of request " + requestId + " is in flight");
        }
        return proc;
    }

    private void stop(AsyncTransfer pull, int handle, Handle state) {
        Handle[] handles = recvingTransfers.get(pull.requestId);
        handles[handle] = state;
        pull.done = java.util.Arrays.stream(handles).noneMatch(h -> h == Handle.PROC);
    }

    /** Worker: every pending handshake fails (as set up), then every handle still in progress completes. Returns how many pulls had one. */
    @Override
    public synchronized int finishInFlightTransfers() {
        int n = failPendingHandshakes();
        for (AsyncTransfer pull : List.copyOf(loads.values())) {
            if (!pull.done && recvingTransfers.containsKey(pull.requestId)) {
                completePull(pull.requestId);
                n++;
            }
        }
        return n;
    }

    /** True while a handle of a pull of {@code requestId} is in progress. */
    public synchronized boolean isPullInFlight(String requestId) {
        AsyncTransfer pull = loads.get(requestId);
        return pull != null && !pull.done;
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return loads.containsKey(requestId) || pendingHandshake.contains(requestId) || failedRecvReqs.contains(requestId);
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

    @Override
    public synchronized boolean isIdle() {
        return loads.isEmpty() && pendingHandshake.isEmpty() && failedRecvReqs.isEmpty();
    }
}
