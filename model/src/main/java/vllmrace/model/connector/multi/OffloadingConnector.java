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
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.kv.TransferTarget;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;

/**
 * The store half of {@code vllm/distributed/kv_transfer/kv_connector/v1/offloading_connector.py} in its per-request
 * design (read at 0072b0b7): {@code request_finished} returns {@code req_id in self._reqs_being_stored} (the blocks stay
 * held while a store of the request runs), and each worker reports the request in {@code finished_sending} when its
 * own store completes. Every prefill-context-parallel rank runs its own store of its copy of the request's KV (the
 * offloader "saves on every rank", #53903's description), so the aggregator hears of it once per rank. The model starts
 * the request's last store at {@code request_finished}; stores of running requests and loads are not modelled here.
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public final class OffloadingConnector extends NoLoadChild {
    /** Per PCP rank: the stores in flight or done and not yet reported, by request id. */
    private final List<Map<String, AsyncTransfer>> stores = new ArrayList<>();
    /** Per PCP rank: the ids that worker has seen in {@code finished_req_ids}. */
    private final List<Set<String>> seenFinished = new ArrayList<>();

    /**
     * @param pcpSize how many PCP ranks run a worker of this connector
     * @throws IllegalArgumentException for a PCP size below 1
     */
    public OffloadingConnector(String name, KvCacheManager kvCacheManager, int pcpSize) {
        super(name, kvCacheManager);
        if (pcpSize < 1) {
            throw new IllegalArgumentException("pcp_size must be >= 1, got " + pcpSize);
        }
        for (int rank = 0; rank < pcpSize; rank++) {
            stores.add(new LinkedHashMap<>());
            seenFinished.add(new LinkedHashSet<>());
        }
    }

    /**
     * {@code request_finished}: a normally finished request with blocks gets a store on every rank (each reads the blocks
     * as they are when it completes), and its blocks stay held; anything else frees now.
     *
     * @throws IllegalStateException if a store of that id is still unreported (nothing changes)
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
        if (stores.get(0).containsKey(request.requestId())) {
            throw new IllegalStateException(name() + ": a store of " + request.requestId() + " is still unreported");
        }
        for (Map<String, AsyncTransfer> rankStores : stores) {
            rankStores.put(request.requestId(), new AsyncTransfer(request.requestId(), kvCacheManager.beginTransfer(request.requestId())));
        }
        return new RequestFinishedResult(true, null);
    }

    /**
     * Worker on PCP rank {@code rank}: the store of {@code requestId} completes (it read the blocks).
     *
     * @throws IllegalArgumentException for a rank outside [0, pcp_size)
     * @throws UnknownTransferException if no store of that id is in flight on that rank (nothing changes)
     */
    public synchronized void completeStore(int rank, String requestId) {
        Objects.requireNonNull(requestId, "requestId");
        AsyncTransfer store = stores.get(checkRank(rank)).get(requestId);
        if (store == null || store.done) {
            throw new UnknownTransferException(name() + ": no store of request " + requestId + " is in flight on PCP rank " + rank);
        }
        kvCacheManager.completeRead(store.target);
        store.done = true;
    }

    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        return getFinishedOnRank(0, finishedReqIds);
    }

    /** The worker on PCP rank {@code rank}, one poll: its completed stores of requests it has seen finish. */
    @Override
    public synchronized KvConnectorOutput getFinishedOnRank(int rank, Set<String> finishedReqIds) {
        Map<String, AsyncTransfer> rankStores = stores.get(checkRank(rank));
        Set<String> seen = seenFinished.get(rank);
        seen.addAll(Objects.requireNonNull(finishedReqIds, "finishedReqIds"));
        Set<String> sending = new LinkedHashSet<>();
        rankStores.values().removeIf(s -> s.done && seen.contains(s.requestId) && sending.add(s.requestId));
        return new KvConnectorOutput(sending, Set.of(), Set.of());
    }

    private int checkRank(int rank) {
        if (rank < 0 || rank >= stores.size()) {
            throw new IllegalArgumentException(name() + ": PCP rank " + rank + " is outside [0, " + stores.size() + ")");
        }
        return rank;
    }

    /** The environment: every store still in flight on any rank completes. Returns how many did. */
    @Override
    public synchronized int finishInFlightTransfers() {
        int n = 0;
        for (int rank = 0; rank < stores.size(); rank++) {
            for (AsyncTransfer store : stores.get(rank).values()) {
                if (!store.done) {
                    kvCacheManager.completeRead(store.target);
                    store.done = true;
                    n++;
                }
            }
        }
        return n;
    }

    @Override
    public synchronized boolean isIdle() {
        return stores.stream().allMatch(Map::isEmpty);
    }

    @Override
    public synchronized String progressSignature() {
        List<String> perRank = new ArrayList<>();
        stores.forEach(s -> perRank.add(s.keySet().toString()));
        return name() + " stores per rank " + perRank;
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return stores.stream().anyMatch(s -> s.containsKey(requestId));
    }

    /** The stores still reading blocks. */
    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        List<TransferTarget> targets = new ArrayList<>();
        stores.forEach(s -> s.values().stream().filter(t -> !t.done).forEach(t -> targets.add(t.target)));
        return targets;
    }
}
