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
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.kv.TransferTarget;
import vllmrace.model.sched.Request;

/**
 * The prefill (P) side of NIXL push mode: {@code vllm/distributed/kv_transfer/kv_connector/v1/nixl/push_scheduler.py}
 * {@code request_finished} and {@code push_worker.py} {@code NixlPushConnectorWorker} (read at 8cc02e7f, before #56104;
 * the #58188 shape at 039e79a6). P WRITEs a finished request's KV into the decode side's blocks and reports the request
 * in {@code finished_sending} once every WRITE handle is released, so its scheduler frees the source blocks. The lease,
 * D's heartbeats and the reaper are {@link NixlLeaseHolder}'s.
 *
 * <p>Once D's PUSH_REG matched, the writer thread posts one WRITE per target D rank, all at once
 * ({@code _sending_transfers[req_id].extend(handles)}); each handle reads the source blocks it snapshotted when it
 * completes. {@code get_finished} pops the requests with no handle in progress ({@code _pop_done_transfers}). Before
 * #56104 each is reported. After #56104 the done pushes are filtered through {@code _recving_metadata} (#58188's
 * description: "which tracks incoming requests"), which on P holds no producer request: the completion is dropped and
 * the blocks wait for the lease. The detector records it when the reaper releases a request whose every WRITE had
 * completed ({@link ViolationKind#SEND_COMPLETION_NEVER_REPORTED}). With {@link Fix#PUSH_SEND_REPORTED_PER_DIRECTION}
 * (#58188, proposed) the send side is judged by its own state: a request still leased whose handles all completed, none
 * failed. The lease expiring while a WRITE is still in progress is not modelled: the scenarios' WRITEs complete before it.
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public final class NixlPushProducer extends NixlLeaseHolder {
    /** The default {@code kv_lease_duration} in worker polls: longer than any scenario's actors run, so only the arbiter reaches it. */
    public static final int LEASE_POLLS = 8;

    /** {@code _sending_transfers}: each posted push's WRITE handles, until none is in progress. */
    private final Map<String, Write[]> sendingTransfers = new LinkedHashMap<>();
    /** The source blocks each posted push reads, snapshotted when its WRITEs were posted. */
    private final Map<String, TransferTarget> sources = new LinkedHashMap<>();
    /** Pushes whose every handle completed, not reported yet (the detector's view: only the lease will release them). */
    private final Set<String> completedUnreported = new LinkedHashSet<>();
    /** #58188's {@code _send_failures}: a request with a failed WRITE, remembered across polls. */
    private final Set<String> sendFailures = new LinkedHashSet<>();

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
        super(name, kvCacheManager, fixes, leasePolls);
    }

    /** {@code request_finished} on P: a normally finished request with blocks is leased; anything else frees now. */
    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        if (!leases(request, blockIds)) {
            return RequestFinishedResult.FREE_NOW;
        }
        grantLease(request.requestId());
        return new RequestFinishedResult(true, Map.of("do_remote_prefill", Boolean.TRUE));
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
            throw new UnknownTransferException(name() + ": request " + requestId + " holds no lease with nothing posted");
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
        kvCacheManager.completeRemoteRead(sources.get(requestId), "NIXL push WRITE");
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

    /** The first of {@code requestId}'s WRITE handles still in progress, or -1 if none is (or nothing is posted). */
    public synchronized int firstWriteInProgress(String requestId) {
        Write[] handles = sendingTransfers.get(Objects.requireNonNull(requestId, "requestId"));
        for (int h = 0; handles != null && h < handles.length; h++) {
            if (handles[h] == Write.PROC) {
                return h;
            }
        }
        return -1;
    }

    private Write[] handleInProgress(String requestId, int handle) {
        Write[] handles = sendingTransfers.get(Objects.requireNonNull(requestId, "requestId"));
        if (handles == null || handle < 0 || handle >= handles.length || handles[handle] != Write.PROC) {
            throw new UnknownTransferException(name() + ": WRITE handle " + handle + " of a push of request " + requestId + " is not in progress");
        }
        return handles;
    }

    /**
     * {@code get_finished} on P, one poll (one tick of the lease clock): the pushes with no handle in progress are
     * popped and reported as the fixes say (class comment), then the reaper ({@link NixlLeaseHolder}). A push's
     * completion is reported only once its id was seen in {@code finished_req_ids} (CN2).
     */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        tick(finishedReqIds);
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
        reap(sending);
        return new KvConnectorOutput(sending, Set.of(), Set.of());
    }

    /** The reaper releases {@code requestId}: a push whose WRITEs all completed was never reported (the detector). */
    @Override
    protected void leaseExpired(String requestId) {
        if (completedUnreported.remove(requestId)) {
            kvCacheManager.violations().record(ViolationKind.SEND_COMPLETION_NEVER_REPORTED, requestId, "NIXL push: every WRITE of "
                    + requestId + " completed, but get_finished never reported it in finished_sending; the lease reaper released "
                    + "its blocks when its lease expired (kv_lease_duration " + leasePolls + " polls)");
        }
        sources.remove(requestId);
        sendingTransfers.remove(requestId);
        sendFailures.remove(requestId);
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

    /** Nothing leased, no heartbeat waiting and nothing posted. */
    @Override
    public synchronized boolean isIdle() {
        return super.isIdle() && sendingTransfers.isEmpty();
    }

    /** What another poll could change: the leases and the clock, and what is posted. */
    @Override
    public synchronized String progressSignature() {
        StringBuilder posted = new StringBuilder();
        sendingTransfers.forEach((id, handles) -> posted.append(id).append(Arrays.toString(handles)));
        return super.progressSignature() + " posted " + posted;
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return super.hasPendingTransfer(requestId) || sendingTransfers.containsKey(requestId);
    }

    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        List<TransferTarget> targets = new ArrayList<>();
        sendingTransfers.keySet().forEach(id -> targets.add(sources.get(id)));
        return targets;
    }
}
