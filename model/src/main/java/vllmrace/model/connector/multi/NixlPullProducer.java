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
        super(name, kvCacheManager, fixes, leasePolls);
        this.bidirectional = bidirectional;
    }

    /** {@code request_finished} on P: a normally finished request with blocks is leased and its blocks handed to D. */
    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        if (!leases(request, blockIds)) {
            return RequestFinishedResult.FREE_NOW;
        }
        grantLease(request.requestId());
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
        return super.isIdle() && handed.isEmpty() && pendingNotifs.isEmpty();
    }

    @Override
    public synchronized String progressSignature() {
        return super.progressSignature() + " handed " + handed.keySet() + " notifications " + pendingNotifs;
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return super.hasPendingTransfer(requestId) || pendingNotifs.contains(requestId);
    }

    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        return new ArrayList<>(handed.values());
    }
}
