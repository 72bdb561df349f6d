package vllmrace.model.connector.multi;

import java.util.ArrayList;
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
 * The prefill (P) side of NIXL pull mode: {@code nixl/pull_scheduler.py} {@code request_finished} on P (read at
 * 0050936b) and {@code pull_worker.py} {@code _get_new_notifs} (read at 0316d25a and d80b52aa). P holds a finished
 * request's blocks under a lease ({@link NixlLeaseHolder}) for the decode side to READ: a one-sided RDMA read P takes no
 * part in. D's completion notification ({@code "req_id:consumers"}) reaches P's notification queue and, handled at the
 * next poll, releases the lease ({@code finished_sending}). A notification for a request P no longer leases is only
 * logged ("Potentially invalid KV blocks for unrecognized request %s were retrieved by a decode worker. They may have
 * expired.") and skipped.
 *
 * <p>D's READ ({@link #remoteRead}) copies the blocks {@code request_finished} handed it ({@code remote_block_ids}) as they
 * are when it completes: after the lease expired they may be free or another request's, recorded as
 * {@link ViolationKind#REMOTE_READ_OF_FREED_BLOCK}. Upstream D checks nothing before an ordinary pull (only the
 * bidirectional turn-2 read checks an expiry, #47021), and the READ completes DONE. With
 * {@link Fix#DECLINE_EXPIRED_REMOTE_READ} (the suite's proposal) P advertises the lease's expiry and D declines a READ
 * at or after it: nothing is copied, no notification comes, D's load fails there (not modelled on this side).
 *
 * <p>Bidirectional KV transfer ({@code bidirectional}): the decode side holds a finished request's blocks for the
 * prefill side's turn-2 READ, under {@code decoder_kv_blocks_ttl} (480 s by default, never renewed: heartbeats are off
 * for these), and advertises their expiry in {@code remote_blocks_expiry_time} ({@code if is_d_node}). The holder is
 * then this class on the decode side and the reader the prefill side; #47021 ({@link Fix#TURN2_READ_EXPIRY_CHECK},
 * merged) has it decline a READ near the expiry ({@code _is_turn2_read_expired}).
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public final class NixlPullProducer extends NixlLeaseHolder {
    /** The blocks handed to the decode side ({@code remote_block_ids}), snapshotted at {@code request_finished}, until it READs them. */
    private final Map<String, TransferTarget> handed = new LinkedHashMap<>();
    /** The expiry {@code request_finished} advertised (the lease as granted; heartbeats do not move it). */
    private final Map<String, Long> advertisedExpiry = new LinkedHashMap<>();
    /** D's READ-completion notifications in the queue, handled at the next poll. */
    private final Set<String> pendingNotifs = new LinkedHashSet<>();
    /** The decode side holding blocks for a bidirectional turn-2 READ, not the prefill side of an ordinary pull. */
    private final boolean bidirectional;
    /** Per replicated PCP rank above 0 (index rank - 1): the {@code reqs_to_send} of the metadata not yet bound there. */
    private final List<Set<String>> replicaReqsToSend = new ArrayList<>();

    /**
     * @param leasePolls {@code kv_lease_duration} in worker polls
     * @throws IllegalArgumentException for a lease shorter than 1 poll
     */
    public NixlPullProducer(String name, KvCacheManager kvCacheManager, FixSet fixes, int leasePolls) {
        this(name, kvCacheManager, fixes, leasePolls, false);
    }

    /**
     * As {@link #NixlPullProducer(String, KvCacheManager, FixSet, int)}; with {@code bidirectional}, the decode side of a
     * bidirectional transfer, {@code leasePolls} its {@code decoder_kv_blocks_ttl}.
     */
    public NixlPullProducer(String name, KvCacheManager kvCacheManager, FixSet fixes, int leasePolls, boolean bidirectional) {
        this(name, kvCacheManager, fixes, leasePolls, bidirectional, 1);
    }

    /**
     * As {@link #NixlPullProducer(String, KvCacheManager, FixSet, int, boolean)} on {@code pcpSize} replicated-KV
     * prefill-context-parallel ranks: rank 0 is this object (it serves the decode side's READs); a rank above 0 holds a
     * copy and serves nothing. Before #53903 ({@link Fix#PCP_REPLICA_REPORTS_SENT}) such a rank skips the send bookkeeping
     * ({@code start_load_kv}: {@code if self.pcp_rank > 0: return}, #52779) and its {@code done_sending} is cleared, and
     * {@code get_finished_count()} is TP x PP, so that only rank 0's report is awaited; with it, the rank reports each
     * request of {@code reqs_to_send} as done sending when the metadata arrives, and the count is the world size.
     *
     * @throws IllegalArgumentException for a lease shorter than 1 poll or a PCP size below 1
     */
    public NixlPullProducer(String name, KvCacheManager kvCacheManager, FixSet fixes, int leasePolls, boolean bidirectional, int pcpSize) {
        super(name, kvCacheManager, fixes, leasePolls);
        if (pcpSize < 1) {
            throw new IllegalArgumentException("pcp_size must be >= 1, got " + pcpSize);
        }
        this.bidirectional = bidirectional;
        for (int rank = 1; rank < pcpSize; rank++) {
            replicaReqsToSend.add(new LinkedHashSet<>());
        }
    }

    /**
     * {@code get_finished_count()}: TP x PP (1 here: the world is the PCP ranks) on a replicated-PCP producer before
     * #53903 (#52779's override); None, the world size, otherwise.
     */
    @Override
    public Integer getFinishedCount() {
        return replicaReqsToSend.isEmpty() || fixes.isOn(Fix.PCP_REPLICA_REPORTS_SENT) ? null : 1;
    }

    /**
     * The worker on replicated PCP rank {@code rank}, one poll: it binds the {@code reqs_to_send} of the metadata since
     * its last poll and, with #53903, reports them as done sending; before it, nothing ({@code done_sending.clear()}).
     *
     * @throws IllegalArgumentException for a rank outside [0, pcp_size) (nothing changes)
     */
    @Override
    public synchronized KvConnectorOutput getFinishedOnRank(int rank, Set<String> finishedReqIds) {
        if (rank < 0 || rank > replicaReqsToSend.size()) {
            throw new IllegalArgumentException(name() + ": PCP rank " + rank + " is outside [0, " + (replicaReqsToSend.size() + 1) + ")");
        }
        if (rank == 0) {
            return getFinished(finishedReqIds);
        }
        Objects.requireNonNull(finishedReqIds, "finishedReqIds");
        Set<String> bound = replicaReqsToSend.get(rank - 1);
        Set<String> sending = fixes.isOn(Fix.PCP_REPLICA_REPORTS_SENT) ? new LinkedHashSet<>(bound) : Set.of();
        bound.clear();
        return new KvConnectorOutput(sending, Set.of(), Set.of());
    }

    /** {@code request_finished} on P: a normally finished request with blocks is leased and its blocks handed to D. */
    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        if (!leases(request, blockIds)) {
            return RequestFinishedResult.FREE_NOW;
        }
        grantLease(request.requestId());
        replicaReqsToSend.forEach(ids -> ids.add(request.requestId())); // the step's metadata reaches every rank
        handed.put(request.requestId(), kvCacheManager.beginTransfer(request.requestId()));
        advertisedExpiry.put(request.requestId(), now + leasePolls);
        return new RequestFinishedResult(true, Map.of("do_remote_prefill", Boolean.TRUE, "remote_block_ids", List.copyOf(blockIds)));
    }

    /**
     * The remote side's READ of {@code requestId}'s blocks completes (it copies them as they are now), and its
     * notification joins this side's queue; a READ at or after the advertised expiry is declined instead with
     * {@link Fix#DECLINE_EXPIRED_REMOTE_READ} (an ordinary pull) or {@link Fix#TURN2_READ_EXPIRY_CHECK} (a bidirectional
     * turn-2 READ). Returns whether it read.
     *
     * @throws UnknownTransferException if no blocks of that id were handed to a decode side, or they were read already
     *     (nothing changes)
     */
    public synchronized boolean remoteRead(String requestId) {
        TransferTarget target = handed.get(Objects.requireNonNull(requestId, "requestId"));
        if (target == null) {
            throw new UnknownTransferException(name() + ": no blocks of request " + requestId + " are handed to a decode side");
        }
        handed.remove(requestId);
        Fix check = bidirectional ? Fix.TURN2_READ_EXPIRY_CHECK : Fix.DECLINE_EXPIRED_REMOTE_READ;
        if (fixes.isOn(check) && now >= advertisedExpiry.get(requestId)) {
            advertisedExpiry.remove(requestId);
            return false; // "Declining expired remote read"
        }
        advertisedExpiry.remove(requestId);
        kvCacheManager.completeRemoteRead(target, bidirectional ? "the prefill side's turn-2 NIXL READ" : "a decode side's NIXL READ");
        pendingNotifs.add(requestId);
        return true;
    }

    /**
     * The decode side gives the transfer up without reading: #41269's rejection notice or the empty pull of a request it
     * aborted before scheduling ({@code send_notif} with no blocks; Mooncake's empty {@code req_blocks}). The notification
     * joins this side's queue and releases the lease at the next poll.
     *
     * @throws UnknownTransferException if no blocks of that id were handed to a decode side, or they were read already
     *     (nothing changes)
     */
    public synchronized void releaseNotice(String requestId) {
        if (handed.remove(Objects.requireNonNull(requestId, "requestId")) == null) {
            throw new UnknownTransferException(name() + ": no blocks of request " + requestId + " are handed to a decode side");
        }
        advertisedExpiry.remove(requestId);
        pendingNotifs.add(requestId);
    }

    /**
     * The environment: no decode side will ever read or release {@code requestId}'s blocks (its request is gone and
     * nothing told this side); the hand-off is dropped and the lease is left to expire.
     *
     * @throws UnknownTransferException if no blocks of that id are handed to a decode side (nothing changes)
     */
    public synchronized void forgetHandoff(String requestId) {
        if (handed.remove(Objects.requireNonNull(requestId, "requestId")) == null) {
            throw new UnknownTransferException(name() + ": no blocks of request " + requestId + " are handed to a decode side");
        }
        advertisedExpiry.remove(requestId);
    }

    /**
     * Detector (CN4): {@code requestId}'s blocks are leased and handed to a decode side whose request no longer exists
     * ({@code decodeRequestAlive} false): nothing will read or release them, only the lease's expiry frees them. Records
     * {@link ViolationKind#PREFILL_BLOCKS_STRANDED} and drops the hand-off (the lease left to expire). Returns whether it did.
     */
    public synchronized boolean checkStranded(String requestId, boolean decodeRequestAlive) {
        if (decodeRequestAlive || !isLeased(requestId) || !handed.containsKey(requestId)) {
            return false;
        }
        kvCacheManager.violations().record(ViolationKind.PREFILL_BLOCKS_STRANDED, requestId, "the decode request for " + requestId
                + " was cancelled before its EngineCore add and nothing told the prefill side: its blocks stay held for "
                + "a read that will never come, until the lease timeout");
        forgetHandoff(requestId);
        return true;
    }

    /** Whether {@code requestId}'s blocks are still handed to a decode side that has neither read nor released them. */
    public synchronized boolean handedTo(String requestId) {
        return handed.containsKey(requestId);
    }

    /**
     * {@code get_finished} on P, one poll: D's notifications release their leases ({@code _get_new_notifs}; one consumer
     * here), one for a lease already gone is logged and skipped; then the reaper.
     */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        tick(finishedReqIds);
        Set<String> sending = new LinkedHashSet<>();
        for (String id : pendingNotifs) {
            if (reqsToSend.remove(id) != null) {
                sending.add(id);
            } // else: "Potentially invalid KV blocks for unrecognized request ... They may have expired."; continue
        }
        pendingNotifs.clear();
        reap(sending);
        return new KvConnectorOutput(sending, Set.of(), Set.of());
    }

    /** The reaper releases an expired lease; the blocks stay handed: the decode side may still READ them. */
    @Override
    protected void leaseExpired(String requestId) {
    }

    /** The environment: every decode side still to READ does. Returns how many did. */
    @Override
    public synchronized int finishInFlightTransfers() {
        List<String> ids = List.copyOf(handed.keySet());
        ids.forEach(this::remoteRead);
        return ids.size();
    }

    @Override
    public synchronized boolean isIdle() {
        return super.isIdle() && handed.isEmpty() && pendingNotifs.isEmpty() && replicaReqsToSend.stream().allMatch(Set::isEmpty);
    }

    @Override
    public synchronized String progressSignature() {
        return super.progressSignature() + " handed " + handed.keySet() + " notifications " + pendingNotifs
                + (replicaReqsToSend.isEmpty() ? "" : " replica reqs_to_send " + replicaReqsToSend);
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return super.hasPendingTransfer(requestId) || pendingNotifs.contains(requestId)
                || replicaReqsToSend.stream().anyMatch(ids -> ids.contains(requestId));
    }

    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        return new ArrayList<>(handed.values());
    }
}
