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
import vllmrace.model.connector.KvRole;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.kv.TransferTarget;
import vllmrace.model.sched.Request;

/**
 * The decode (D) side of NIXL push mode: {@code nixl/push_scheduler.py} {@code update_state_after_alloc} (the PUSH_REG
 * registration of the request's blocks) and {@code push_worker.py} {@code _get_new_notifs} (read at 8cc02e7f and
 * 039e79a6). D expects one completion notification per prefill rank that WRITEs to it ({@code expected_notifs =
 * meta.pp_size * max(1, P_TP // D_TP)}); each prefill WRITE lands in D's blocks and its notification counts
 * ({@code consumer_notification_counts_by_req}); when the count is reached the request is marked received
 * ({@code _recving_transfers.setdefault(req_id, [])}) and reported in {@code finished_recving}.
 *
 * <p>A WRITE the prefill side fails to post is only logged there ({@code _xfer_blocks}: release the handle,
 * {@code record_failed_transfer}, {@code return None}): nothing reaches D, the count is never reached, and the request
 * waits in WAITING_FOR_REMOTE_KVS holding its blocks (#48633 row C2); the model runs no timeout for it (upstream's
 * registration watchdog only drops the registration, "the engine layer will eventually time it out via the lease").
 * With {@link Fix#PUSH_FAILURE_NOTIFIED} (#50754, proposed) the prefill side sends a PUSH_FAIL notification in place of
 * the completion: it counts, and a request with one is reported with its blocks invalid ({@code kv_load_failure_policy}).
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public final class NixlPushConsumer extends AsyncLoadingChild {
    private final FixSet fixes;
    /** Per request: how many prefill ranks WRITE to this side ({@code expected_notifs}), set with the remote prefill. */
    private final Map<String, Integer> producerRanks = new HashMap<>();
    /** Per registered request: WRITEs landed (notified), and posts the prefill side failed. */
    private final Map<String, int[]> progress = new HashMap<>();

    public NixlPushConsumer(String name, KvCacheManager kvCacheManager, FixSet fixes) {
        super(name, kvCacheManager);
        this.fixes = Objects.requireNonNull(fixes, "fixes");
    }

    /** {@code kv_both}, as NIXL P/D deployments configure both sides. */
    @Override
    public KvRole kvRole() {
        return KvRole.KV_BOTH;
    }

    /**
     * Set-up: {@code requestId}'s first {@code numTokens} prompt tokens are on a prefill instance whose
     * {@code producerRanks} ranks each WRITE this side's share once the request registers.
     *
     * @throws IllegalArgumentException for a token count or a rank count below 1 (nothing changes)
     */
    public synchronized void remotePush(String requestId, int numTokens, int producerRanks) {
        if (producerRanks < 1) {
            throw new IllegalArgumentException("a push needs at least one prefill rank, got " + producerRanks);
        }
        offerPrefix(requestId, numTokens, "remote push");
        this.producerRanks.put(requestId, producerRanks);
    }

    /** {@code update_state_after_alloc}: the blocks registered with the prefill side (PUSH_REG); its WRITEs may start. */
    @Override
    public synchronized void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        super.updateStateAfterAlloc(request, blockIds, numExternalTokens);
        if (loads.containsKey(request.requestId()) && !progress.containsKey(request.requestId())) {
            progress.put(request.requestId(), new int[2]);
        }
    }

    /** Decode side: no blocks are held for anyone. */
    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        countRequestFinished(request, blockIds);
        return RequestFinishedResult.FREE_NOW;
    }

    /**
     * A prefill rank's WRITE of {@code requestId} lands in this side's blocks and its notification arrives.
     *
     * @throws UnknownTransferException if the request is not registered or every rank's WRITE already ended (nothing changes)
     */
    public synchronized void writeLands(String requestId) {
        int[] p = registeredWithRankLeft(requestId);
        kvCacheManager.completeWrite(loads.get(requestId).target);
        p[0]++;
    }

    /**
     * A prefill rank fails to post its WRITE of {@code requestId}: it only logs, unless {@link Fix#PUSH_FAILURE_NOTIFIED}
     * sends PUSH_FAIL in its place.
     *
     * @throws UnknownTransferException if the request is not registered or every rank's WRITE already ended (nothing changes)
     */
    public synchronized void postFails(String requestId) {
        registeredWithRankLeft(requestId)[1]++;
    }

    private int[] registeredWithRankLeft(String requestId) {
        int[] p = progress.get(Objects.requireNonNull(requestId, "requestId"));
        if (p == null || p[0] + p[1] >= producerRanks.get(requestId)) {
            throw new UnknownTransferException(name() + ": no WRITE of request " + requestId + " is still to come");
        }
        return p;
    }

    /**
     * {@code get_finished} on D: a request whose notifications reached the expected count is reported; one counting a
     * PUSH_FAIL ({@link Fix#PUSH_FAILURE_NOTIFIED}) with its blocks invalid.
     */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        seenFinished.addAll(Objects.requireNonNull(finishedReqIds, "finishedReqIds"));
        boolean failNotified = fixes.isOn(Fix.PUSH_FAILURE_NOTIFIED);
        Set<String> recving = new LinkedHashSet<>();
        Set<Integer> invalid = new LinkedHashSet<>();
        for (Iterator<Map.Entry<String, int[]>> it = progress.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, int[]> e = it.next();
            int notified = e.getValue()[0] + (failNotified ? e.getValue()[1] : 0);
            if (notified < producerRanks.get(e.getKey())) {
                continue;
            }
            AsyncTransfer push = loads.remove(e.getKey());
            if (e.getValue()[1] > 0) {
                invalid.addAll(push.target.blockIds());
            }
            recving.add(e.getKey());
            it.remove();
        }
        return new KvConnectorOutput(Set.of(), recving, invalid);
    }

    /** The environment: every WRITE still to come from a rank whose post did not fail lands. Returns how many did. */
    @Override
    public synchronized int finishInFlightTransfers() {
        int n = 0;
        for (String id : List.copyOf(progress.keySet())) {
            int[] p = progress.get(id);
            while (p[0] + p[1] < producerRanks.get(id)) {
                writeLands(id);
                n++;
            }
        }
        return n;
    }

    @Override
    public synchronized boolean isIdle() {
        return loads.isEmpty();
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return loads.containsKey(requestId);
    }

    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        List<TransferTarget> targets = new ArrayList<>();
        loads.values().forEach(l -> targets.add(l.target));
        return targets;
    }

    @Override
    public synchronized String progressSignature() {
        StringBuilder b = new StringBuilder(name() + " pushes");
        progress.forEach((id, p) -> b.append(' ').append(id).append(' ').append(p[0]).append('+').append(p[1]).append('/')
                .append(producerRanks.get(id)));
        return b.toString();
    }
}
