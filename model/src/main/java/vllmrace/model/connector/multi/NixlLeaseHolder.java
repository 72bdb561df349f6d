package vllmrace.model.connector.multi;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;

/**
 * What the NIXL worker's two producer sides share ({@code nixl/base_worker.py}): the blocks of a finished request held
 * for a remote side under a lease ({@code _reqs_to_send}), D's heartbeats and the reaper. Time is the worker's poll
 * count: each {@code get_finished} is one tick.
 *
 * <p>D's heartbeats ({@code "HB:" + ids}, fire-and-forget) reach the worker's notification queue and are handled at the
 * next poll, before its reaper ({@code _get_new_notifs}, then the reaper): {@code _handle_heartbeat} sets a leased id's
 * expiry to {@code max(old, now + lease_extension)} in place (the extension {@code kv_lease_duration * 2 // 3}); an id
 * not leased is ignored. The reaper walks the leases in grant order and stops at the first that has not expired
 * (base_worker.py@d80b52aa); a renewed head therefore strands expired leases behind it (LeaseReaperHeadOfLine), which
 * the detector records as {@link ViolationKind#LEASE_EXPIRED_NOT_RELEASED}; with {@link Fix#REAP_EVERY_EXPIRED_LEASE}
 * (#50789, proposed) it scans every lease. An expired lease is reported in {@code finished_sending}: the scheduler frees
 * the blocks.
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public abstract class NixlLeaseHolder extends NoLoadChild {
    protected final FixSet fixes;
    /** {@code _reqs_to_send}: each leased request's expiry (a poll count), in grant order. */
    protected final Map<String, Long> reqsToSend = new LinkedHashMap<>();
    protected final Set<String> seenFinished = new LinkedHashSet<>();
    /** Set-up: ids whose next finished request carries no {@code do_remote_decode} (served locally: nothing to hold). */
    private final Set<String> localRequests = new LinkedHashSet<>();
    /** Heartbeat ids arrived in the notification queue, handled at the next poll. */
    private final List<String> pendingHeartbeats = new ArrayList<>();
    /** Leases already recorded as expired and not released (each once). */
    private final Set<String> strandedRecorded = new LinkedHashSet<>();
    protected final int leasePolls;
    /** The worker's clock: polls so far. */
    protected long now;

    protected NixlLeaseHolder(String name, KvCacheManager kvCacheManager, FixSet fixes, int leasePolls) {
        super(name, kvCacheManager);
        if (leasePolls < 1) {
            throw new IllegalArgumentException("a lease lasts at least one poll, got " + leasePolls);
        }
        this.leasePolls = leasePolls;
        this.fixes = Objects.requireNonNull(fixes, "fixes");
    }

    /**
     * {@code request_finished} on the producer: whether a request is leased ({@code delay_free_blocks = any(len(group) >
     * 0 ...)} for a normally finished one; an abort frees now). Validates the arguments.
     */
    protected final boolean leases(Request request, List<Integer> blockIds) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
        if (localRequests.remove(request.requestId())) {
            return false; // if not params.get("do_remote_decode"): return False, None
        }
        boolean normalFinish = request.status() == RequestStatus.FINISHED_STOPPED
                || request.status() == RequestStatus.FINISHED_LENGTH_CAPPED;
        return normalFinish && !blockIds.isEmpty();
    }

    /**
     * Set-up: the next request to finish under {@code requestId} is served locally (its {@code kv_transfer_params} carry
     * no {@code do_remote_decode}): {@code request_finished} frees it at once. Every other request is decoded remotely.
     */
    public synchronized void decodeLocally(String requestId) {
        localRequests.add(Objects.requireNonNull(requestId, "requestId"));
    }

    /** Grants {@code requestId} a lease expiring {@code kv_lease_duration} polls from now. */
    protected final void grantLease(String requestId) {
        reqsToSend.put(requestId, now + leasePolls);
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
        pendingHeartbeats.addAll(List.of(requestIds)); // List.of rejects a null id
    }

    /** One poll's start: the clock ticks and the heartbeats in the notification queue are handled. */
    protected final void tick(Set<String> finishedReqIds) {
        seenFinished.addAll(Objects.requireNonNull(finishedReqIds, "finishedReqIds"));
        now++;
        for (String id : pendingHeartbeats) { // _get_new_notifs: "HB:" -> _handle_heartbeat
            reqsToSend.computeIfPresent(id, (k, old) -> Math.max(old, now + leasePolls * 2 / 3));
        }
        pendingHeartbeats.clear();
    }

    /**
     * The reaper, at the end of a poll: releases the expired leases into {@code sending} ({@link #leaseExpired} first),
     * then records each expired lease it left (once).
     */
    protected final void reap(Set<String> sending) {
        boolean scanAll = fixes.isOn(Fix.REAP_EVERY_EXPIRED_LEASE);
        for (Iterator<Map.Entry<String, Long>> it = reqsToSend.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> lease = it.next();
            if (now < lease.getValue()) {
                if (scanAll) {
                    continue; // _reap_expired_send_leases: every entry
                }
                break; // "Sorted dict, oldest requests are put first so we can exit early."
            }
            it.remove();
            leaseExpired(lease.getKey());
            sending.add(lease.getKey());
        }
        for (Map.Entry<String, Long> lease : reqsToSend.entrySet()) {
            if (now >= lease.getValue() && strandedRecorded.add(lease.getKey())) {
                kvCacheManager.violations().record(ViolationKind.LEASE_EXPIRED_NOT_RELEASED, lease.getKey(), "NIXL lease reaper: the lease of "
                        + lease.getKey() + " expired at poll " + lease.getValue() + " but the reaper stopped at a live lease ahead of it "
                        + "(renewed in place by a heartbeat): its blocks stay held");
            }
        }
    }

    /** The reaper releases {@code requestId}'s expired lease: what the subclass drops with it. */
    protected abstract void leaseExpired(String requestId);

    /** Whether {@code requestId} holds a lease (its blocks wait for a report or for the reaper). */
    public synchronized boolean isLeased(String requestId) {
        return reqsToSend.containsKey(requestId);
    }

    /** Nothing leased and no heartbeat waiting. */
    @Override
    public synchronized boolean isIdle() {
        return reqsToSend.isEmpty() && pendingHeartbeats.isEmpty();
    }

    /** What another poll could change: the heartbeats waiting, the leases and the clock while one runs. */
    @Override
    public synchronized String progressSignature() {
        return name() + " heartbeats " + pendingHeartbeats + " leases " + reqsToSend + " at " + (reqsToSend.isEmpty() ? "-" : String.valueOf(now));
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return reqsToSend.containsKey(requestId);
    }

}
