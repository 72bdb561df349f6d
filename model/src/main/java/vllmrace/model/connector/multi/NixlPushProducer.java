package vllmrace.model.connector.multi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.KvRole;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.kv.TransferTarget;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;

/**
 * The prefill (P) side of NIXL push mode: {@code vllm/distributed/kv_transfer/kv_connector/v1/nixl/push_scheduler.py}
 * {@code request_finished} and {@code push_worker.py} {@code NixlPushConnectorWorker} (read at 8cc02e7f, before #56104;
 * the #58188 shape at 039e79a6). P WRITEs a finished request's KV into the decode side's blocks and reports the request
 * in {@code finished_sending} once every WRITE handle is released, so its scheduler frees the source blocks.
 *
 * <p>{@code request_finished} of a normally finished request with blocks holds them under a lease
 * ({@code _reqs_need_send[id] = now + kv_lease_duration}, delay_free True); the worker's reaper releases an expired lease
 * into {@code done_sending} whatever its handles do. Time is the worker's poll count: each {@code get_finished} is one
 * tick, and a lease lasts {@link #LEASE_POLLS} of them. Once D's PUSH_REG matched, the writer thread posts one WRITE per
 * target D rank, all at once ({@code _sending_transfers[req_id].extend(handles)}); each handle reads the source blocks it
 * snapshotted when it completes.
 *
 * <p>{@code get_finished} pops the requests with no handle in progress ({@code _pop_done_transfers}). Before #56104 each
 * is reported. After #56104 the done pushes are filtered through {@code _recving_metadata} (#58188's description: "which
 * tracks incoming requests"), which on P holds no producer request: the completion is dropped and the blocks wait for the
 * lease. The detector records it when the reaper releases a request whose every WRITE had completed
 * ({@link ViolationKind#SEND_COMPLETION_NEVER_REPORTED}). With {@link Fix#PUSH_SEND_REPORTED_PER_DIRECTION} (#58188,
 * proposed) the send side is judged by its own state: a request still leased whose handles all completed, none failed.
 *
 * <p>D's heartbeats ({@code "HB:" + ids}, fire-and-forget) reach the worker's notification queue and are handled at the
 * next poll, before its reaper ({@code _get_new_notifs}, then the reaper): {@code _handle_heartbeat} sets a leased id's
 * expiry to {@code max(old, now + lease_extension)} in place (the extension {@code kv_lease_duration * 2 // 3}); an id
 * not leased is ignored. The reaper walks the leases in grant order and stops at the first that has not expired
 * (base_worker.py@d80b52aa); a renewed head therefore strands expired leases behind it (LeaseReaperHeadOfLine), which
 * the detector records as {@link ViolationKind#LEASE_EXPIRED_NOT_RELEASED}; with {@link Fix#REAP_EVERY_EXPIRED_LEASE}
 * (#50789, proposed) it scans every lease. The lease expiring while a WRITE is still in progress is not modelled: the
 * scenarios' WRITEs complete before it.
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public final class NixlPushProducer implements ChildConnector {
    /** The default {@code kv_lease_duration} in worker polls: longer than any scenario's actors run, so only the arbiter reaches it. */
    public static final int LEASE_POLLS = 8;

    private final String name;
    private final KvCacheManager kvCacheManager;
    private final FixSet fixes;
    /** {@code _reqs_to_send}: each leased request's expiry (a poll count), in grant order. */
    private final Map<String, Long> reqsToSend = new LinkedHashMap<>();
    /** {@code _sending_transfers}: each posted push's WRITE handles, until none is in progress. */
    private final Map<String, Write[]> sendingTransfers = new LinkedHashMap<>();
    /** The source blocks each posted push reads, snapshotted when its WRITEs were posted. */
    private final Map<String, TransferTarget> sources = new LinkedHashMap<>();
    /** Pushes whose every handle completed, not reported yet (the detector's view: only the lease will release them). */
    private final Set<String> completedUnreported = new LinkedHashSet<>();
    /** #58188's {@code _send_failures}: a request with a failed WRITE, remembered across polls. */
    private final Set<String> sendFailures = new LinkedHashSet<>();
    private final Set<String> seenFinished = new LinkedHashSet<>();
    /** Heartbeat ids arrived in the notification queue, handled at the next poll. */
    private final List<String> pendingHeartbeats = new ArrayList<>();
    /** Leases already recorded as expired and not released (each once). */
    private final Set<String> strandedRecorded = new LinkedHashSet<>();
    private final int leasePolls;
    private long now;

    /** A WRITE handle's {@code check_xfer_state}. */
    private enum Write { PROC, DONE, ERR }

    public NixlPushProducer(String name, KvCacheManager kvCacheManager, FixSet fixes) {
        this(name, kvCacheManager, fixes, LEASE_POLLS);
    }

    /**
     * As {@link #NixlPushProducer(String, KvCacheManager, FixSet)} with {@code kv_lease_duration} = {@code leasePolls}.
     *
     * @throws IllegalArgumentException for a lease shorter than 1 poll
     */
    public NixlPushProducer(String name, KvCacheManager kvCacheManager, FixSet fixes, int leasePolls) {
        if (leasePolls < 1) {
            throw new IllegalArgumentException("a lease lasts at least one poll, got " + leasePolls);
        }
        this.leasePolls = leasePolls;
        this.name = Objects.requireNonNull(name, "name");
        this.kvCacheManager = Objects.requireNonNull(kvCacheManager, "kvCacheManager");
        this.fixes = Objects.requireNonNull(fixes, "fixes");
    }

    @Override
    public String name() {
        return name;
    }

    /** A producer ({@code kv_role} kv_both, as NIXL P/D deployments configure it): it requires KV delivery. */
    @Override
    public KvRole kvRole() {
        return KvRole.KV_BOTH;
    }

    /** P computes the prompt itself: nothing to load. */
    @Override
    public synchronized vllmrace.model.connector.MatchedTokens getNumNewMatchedTokens(Request request, int numComputedTokens) {
        Objects.requireNonNull(request, "request");
        return vllmrace.model.connector.MatchedTokens.NONE;
    }

    @Override
    public synchronized void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
    }

    /**
     * {@code request_finished} on P: a normally finished request with blocks is leased ({@code delay_free_blocks =
     * any(len(group) > 0 ...)}); anything else (an abort) frees now.
     */
    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
        boolean normalFinish = request.status() == RequestStatus.FINISHED_STOPPED
                || request.status() == RequestStatus.FINISHED_LENGTH_CAPPED;
        if (!normalFinish || blockIds.isEmpty()) {
            return RequestFinishedResult.FREE_NOW;
        }
        reqsToSend.put(request.requestId(), now + leasePolls);
        return new RequestFinishedResult(true, Map.of("do_remote_prefill", Boolean.TRUE));
    }

    @Override
    public synchronized void updateConnectorOutput(KvConnectorOutput kvConnectorOutput) {
        Objects.requireNonNull(kvConnectorOutput, "kvConnectorOutput");
    }

    /**
     * D's heartbeat {@code "HB:" + ids} arrives in the worker's notification queue; it is handled at the next poll. An id
     * this side holds no lease of is ignored then, as upstream ignores it (the decode side may run ahead of it).
     *
     * @throws IllegalArgumentException for a heartbeat naming no id (nothing changes)
     */
    public synchronized void heartbeat(String... requestIds) {
        Objects.requireNonNull(requestIds, "requestIds");
        if (requestIds.length == 0) {
            throw new IllegalArgumentException("a heartbeat names at least one request");
        }
        List<String> ids = List.of(requestIds); // rejects a null id
        pendingHeartbeats.addAll(ids);
    }

    /**
     * Writer thread: D's PUSH_REG for {@code requestId} matched its finished blocks; one WRITE per target D rank is posted
     * ({@code _xfer_blocks_for_req}), each reading the blocks the request holds now.
     *
     * @throws IllegalArgumentException for fewer than one target rank (nothing changes)
     * @throws UnknownTransferException if the request holds no lease, or its WRITEs were posted already (nothing changes)
     */
    public synchronized void postWrites(String requestId, int targetRanks) {
        Objects.requireNonNull(requestId, "requestId");
        if (targetRanks < 1) {
            throw new IllegalArgumentException("a push needs at least one target D rank, got " + targetRanks);
        }
        if (!reqsToSend.containsKey(requestId) || sources.containsKey(requestId)) {
            throw new UnknownTransferException(name + ": request " + requestId + " holds no lease with nothing posted");
        }
        Write[] handles = new Write[targetRanks];
        Arrays.fill(handles, Write.PROC);
        sendingTransfers.put(requestId, handles);
        sources.put(requestId, kvCacheManager.beginTransfer(requestId));
    }

    /**
     * NIC: WRITE handle {@code handle} of the push of {@code requestId} is DONE: it read the source blocks.
     *
     * @throws UnknownTransferException if that handle is not in progress (nothing changes)
     */
    public synchronized void completeWrite(String requestId, int handle) {
        Write[] handles = handleInProgress(requestId, handle);
        kvCacheManager.completeRead(sources.get(requestId));
        handles[handle] = Write.DONE;
    }

    /**
     * NIC: WRITE handle {@code handle} of the push of {@code requestId} is ERR.
     *
     * @throws UnknownTransferException if that handle is not in progress (nothing changes)
     */
    public synchronized void failWrite(String requestId, int handle) {
        handleInProgress(requestId, handle)[handle] = Write.ERR;
    }

    private Write[] handleInProgress(String requestId, int handle) {
        Write[] handles = sendingTransfers.get(Objects.requireNonNull(requestId, "requestId"));
        if (handles == null || handle < 0 || handle >= handles.length || handles[handle] != Write.PROC) {
            throw new UnknownTransferException(name + ": WRITE handle " + handle + " of a push of request " + requestId + " is not in progress");
        }
        return handles;
    }

    /**
     * {@code get_finished} on P, one poll (one tick of the lease clock): the pushes with no handle in progress are
     * popped and reported as the fixes say (class comment), then the reaper releases the expired leases, in grant order,
     * stopping at the first that has not expired (base_worker.py@d80b52aa: "Sorted dict ... exit early"). A push's
     * completion is reported only once its id was seen in {@code finished_req_ids} (CN2).
     */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        seenFinished.addAll(Objects.requireNonNull(finishedReqIds, "finishedReqIds"));
        now++;
        for (String id : pendingHeartbeats) { // _get_new_notifs: "HB:" -> _handle_heartbeat
            reqsToSend.computeIfPresent(id, (k, old) -> Math.max(old, now + leasePolls * 2 / 3));
        }
        pendingHeartbeats.clear();
        Set<String> sending = new LinkedHashSet<>();
        for (Iterator<Map.Entry<String, Write[]>> it = sendingTransfers.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Write[]> e = it.next();
            String id = e.getKey();
            if (!seenFinished.contains(id) || Arrays.asList(e.getValue()).contains(Write.PROC)) {
                continue;
            }
            it.remove(); // _pop_done_transfers: del transfers[req_id]
            boolean failed = Arrays.asList(e.getValue()).contains(Write.ERR);
            if (failed) {
                sendFailures.add(id);
            }
            if (reportsDonePush(id)) {
                sending.add(id);
                reqsToSend.remove(id);
                sources.remove(id);
                sendFailures.remove(id);
            } else if (!failed) {
                completedUnreported.add(id); // dropped: only the lease will release it
            }
        }
        boolean scanAll = fixes.isOn(Fix.REAP_EVERY_EXPIRED_LEASE);
        for (Iterator<Map.Entry<String, Long>> it = reqsToSend.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> lease = it.next();
            if (now < lease.getValue()) {
                if (scanAll) {
                    continue; // _reap_expired_send_leases: every entry
                }
                break; // "Sorted dict, oldest requests are put first so we can exit early."
            }
            String id = lease.getKey();
            it.remove();
            if (completedUnreported.remove(id)) {
                kvCacheManager.violations().record(ViolationKind.SEND_COMPLETION_NEVER_REPORTED, id, "NIXL push: every WRITE of "
                        + id + " completed, but get_finished never reported it in finished_sending; the lease reaper released "
                        + "its blocks when its lease expired (kv_lease_duration " + leasePolls + " polls)");
            }
            sources.remove(id);
            sendingTransfers.remove(id);
            sendFailures.remove(id);
            sending.add(id);
        }
        for (Map.Entry<String, Long> lease : reqsToSend.entrySet()) {
            if (now >= lease.getValue() && strandedRecorded.add(lease.getKey())) {
                kvCacheManager.violations().record(ViolationKind.LEASE_EXPIRED_NOT_RELEASED, lease.getKey(), "NIXL lease reaper: the lease of "
                        + lease.getKey() + " expired at poll " + lease.getValue() + " but the reaper stopped at a live lease ahead of it "
                        + "(renewed in place by a heartbeat): its blocks stay held");
            }
        }
        return new KvConnectorOutput(sending, Set.of(), Set.of());
    }

    /**
     * Whether a popped push is reported as done: before #56104 always; after it, only if {@code _recving_metadata} has
     * it (never, on P); with #58188, when it is still leased and none of its WRITEs failed.
     */
    private boolean reportsDonePush(String requestId) {
        if (!fixes.isOn(Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP)) {
            return true;
        }
        if (fixes.isOn(Fix.PUSH_SEND_REPORTED_PER_DIRECTION)) {
            return reqsToSend.containsKey(requestId) && !sendFailures.contains(requestId);
        }
        return false; // req_id in self._recving_metadata: P receives nothing
    }

    /** The environment: every WRITE handle still in progress completes. Returns how many pushes had one. */
    @Override
    public synchronized int finishInFlightTransfers() {
        int n = 0;
        for (String id : List.copyOf(sendingTransfers.keySet())) {
            Write[] handles = sendingTransfers.get(id);
            boolean any = false;
            for (int h = 0; h < handles.length; h++) {
                if (handles[h] == Write.PROC) {
                    completeWrite(id, h);
                    any = true;
                }
            }
            n += any ? 1 : 0;
        }
        return n;
    }

    /** Whether {@code requestId} holds a lease (its blocks wait for a report or for the reaper). */
    public synchronized boolean isLeased(String requestId) {
        return reqsToSend.containsKey(requestId);
    }

    /** Nothing leased and nothing posted. */
    @Override
    public synchronized boolean isIdle() {
        return reqsToSend.isEmpty() && sendingTransfers.isEmpty() && pendingHeartbeats.isEmpty();
    }

    /** What another poll could change: the clock while a lease runs, and what is posted. */
    @Override
    public synchronized String progressSignature() {
        StringBuilder posted = new StringBuilder();
        sendingTransfers.forEach((id, handles) -> posted.append(id).append(Arrays.toString(handles)));
        return name + " heartbeats " + pendingHeartbeats + " leases " + reqsToSend + " at " + (reqsToSend.isEmpty() ? "-" : String.valueOf(now)) + " posted " + posted;
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return reqsToSend.containsKey(requestId) || sendingTransfers.containsKey(requestId);
    }

    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        List<TransferTarget> targets = new ArrayList<>();
        sendingTransfers.keySet().forEach(id -> targets.add(sources.get(id)));
        return targets;
    }

    /** P loads nothing. */
    @Override
    public synchronized boolean hasUnreportedLoad(String requestId) {
        return false;
    }
}
