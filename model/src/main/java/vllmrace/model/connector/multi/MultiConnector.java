package vllmrace.model.connector.multi;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.connector.KvConnectorBaseV1;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.KvConnectorWorker;
import vllmrace.model.connector.KvRole;
import vllmrace.model.connector.MatchedTokens;
import vllmrace.model.connector.PendingTransfers;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.TransferTarget;
import vllmrace.model.sched.Request;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * {@code vllm/distributed/kv_transfer/kv_connector/v1/multi_connector.py}, {@code MultiConnector} (lifecycle §3(b)),
 * both roles. Scheduler side: {@code get_num_new_matched_tokens} (the first child with tokens is chosen,
 * {@code _requests_to_connector}), {@code update_state_after_alloc} (the chosen child gets the blocks and the tokens,
 * the others 0 tokens and, with {@link Fix#NON_CHOSEN_REAL_BLOCKS} (#46865), the real blocks, else empty blocks as before
 * it: 0 is the "do not load" signal, which a child may or may not honour), {@code request_finished} (every child is called; the async saves beyond the first go to
 * {@code _extra_async_saves}), {@code build_connector_meta} (moves the counts into the metadata and resets them).
 * Worker side: {@code bind_connector_metadata} and {@code get_finished}: finished sends are deduplicated by count;
 * finished recvs are a plain union as upstream, or, with {@link Fix#MULTI_CONNECTOR_LOAD_DEDUP} (seed 003 (1)),
 * deduplicated by the mirror count {@code extraAsyncLoads}, filled at {@code update_state_after_alloc} from the children
 * that started a load. With {@link Fix#NO_SAVE_WHILE_LOADING} (#46240) {@code request_finished} of a request whose async
 * load is still in flight, as the scheduler side knows it ({@code loadsInFlight}: added at {@code update_state_after_alloc}
 * when a child started a load, removed when {@code update_connector_output} carries its finished_recving), gives the
 * children that do not load it no blocks: nothing can start a save of blocks still being written, so the load's
 * finished_recving stays the request's only terminal event. Upstream (the reported behaviour) hands every child the real
 * blocks, and a saving child returns True next to the pending load.
 *
 * <p>Model simplification: the model's Scheduler does not call {@code build_connector_meta}; the worker side binds the
 * metadata built since its last step at the start of each {@code get_finished}. A count is therefore bound no later
 * than upstream binds it (the same step's metadata), and always before any child can report the transfer it counts.
 *
 * <p>Thread-safe: every method is synchronized on the connector (lock order: MultiConnector, then a child).
 * Caller errors throw before any state changes.
 */
public final class MultiConnector implements KvConnectorBaseV1, KvConnectorWorker, PendingTransfers {
    private final Map<String, Integer> requestFinishedCalls = new HashMap<>();
    private final FixSet fixes;
    private final KvRole kvRole;
    private final List<ChildConnector> connectors;
    // scheduler side
    private final Map<String, Integer> requestsToConnector = new HashMap<>();
    private Map<String, Integer> extraAsyncSaves = new HashMap<>();
    private Map<String, Integer> extraAsyncLoads = new HashMap<>();
    /** Scheduler side's view of async loads: request id → indices of the children loading it, until its finished_recving. */
    private final Map<String, Set<Integer>> loadsInFlight = new HashMap<>();
    // worker side
    private final Map<String, Integer> workerExtraAsyncSaves = new HashMap<>();
    private final Map<String, Integer> workerExtraAsyncLoads = new HashMap<>();
    /** Prefill context parallel size: one worker per rank (world size here = PCP size). */
    private final int pcpSize;
    /** The worker side's {@code _extra_async_saves} on each PCP rank above 0 (index rank - 1), bound from the same metadata. */
    private final List<Map<String, Integer>> rankExtraAsyncSaves = new ArrayList<>();

    /**
     * A MultiConnector configured {@code kv_both}, as upstream's MultiConnector example is
     * ({@code {"kv_connector":"MultiConnector","kv_role":"kv_both","kv_connector_extra_config":{"connectors":[...]}}}).
     *
     * @throws IllegalArgumentException for no children or a child listed twice
     */
    public MultiConnector(FixSet fixes, List<? extends ChildConnector> connectors) {
        this(fixes, KvRole.KV_BOTH, connectors);
    }

    /**
     * @param kvRole the top-level {@code kv_transfer_config.kv_role}: what the scheduler reads as {@code is_kv_consumer};
     *               each child keeps its own
     * @throws IllegalArgumentException for no children or a child listed twice
     */
    public MultiConnector(FixSet fixes, KvRole kvRole, List<? extends ChildConnector> connectors) {
        this(fixes, kvRole, connectors, 1);
    }

    /**
     * As {@link #MultiConnector(FixSet, KvRole, List)} with {@code pcpSize} workers, one per prefill-context-parallel rank
     * (replicated KV: each rank holds the whole request); each binds the same connector metadata every step.
     *
     * @throws IllegalArgumentException for no children, a child listed twice, or a PCP size below 1
     */
    public MultiConnector(FixSet fixes, KvRole kvRole, List<? extends ChildConnector> connectors, int pcpSize) {
        if (pcpSize < 1) {
            throw new IllegalArgumentException("pcp_size must be >= 1, got " + pcpSize);
        }
        this.pcpSize = pcpSize;
        for (int rank = 1; rank < pcpSize; rank++) {
            rankExtraAsyncSaves.add(new HashMap<>());
        }
        this.kvRole = Objects.requireNonNull(kvRole, "kvRole");
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.connectors = List.copyOf(Objects.requireNonNull(connectors, "connectors"));
        if (this.connectors.isEmpty()) {
            throw new IllegalArgumentException("MultiConnector needs at least one connector");
        }
        if (Set.copyOf(this.connectors).size() != this.connectors.size()) {
            throw new IllegalArgumentException("a connector is listed twice");
        }
    }

    /** The top-level {@code kv_role} (the scheduler's {@code kv_transfer_config.is_kv_consumer} reads it). */
    @Override
    public KvRole kvRole() {
        return kvRole;
    }

    /**
     * multi_connector.py@00f4240e: {@code return any(c.requires_kv_delivery for c in self._connectors)} (not overridden
     * at a4a2a8ee, where the base's default read the top-level role): a child that hands KV off makes the whole
     * connector one that must not lose a preempted request's hand-off.
     */
    @Override
    public boolean requiresKvDelivery() {
        UpstreamPins.enter(UpstreamPin.MULTI_CONNECTOR_REQUIRES_KV_DELIVERY);
        return connectors.stream().anyMatch(KvConnectorBaseV1::requiresKvDelivery);
    }

    @Override
    public synchronized MatchedTokens getNumNewMatchedTokens(Request request, int numComputedTokens) {
        UpstreamPins.enter(UpstreamPin.MULTI_CONNECTOR_GET_NUM_NEW_MATCHED_TOKENS);
        Objects.requireNonNull(request, "request");
        if (numComputedTokens < 0) {
            throw new IllegalArgumentException("num_computed_tokens must be >= 0, got " + numComputedTokens);
        }
        MatchedTokens chosen = null;
        int chosenIndex = -1;
        for (int i = 0; i < connectors.size(); i++) {
            MatchedTokens m = connectors.get(i).getNumNewMatchedTokens(request, numComputedTokens);
            if (m.numExternalTokens() == null) {
                return MatchedTokens.ASK_AGAIN_LATER;
            }
            if (chosen == null && m.numExternalTokens() > 0) {
                chosen = m;
                chosenIndex = i;
            }
        }
        if (chosen == null) {
            return MatchedTokens.NONE;
        }
        requestsToConnector.put(request.requestId(), chosenIndex);
        return chosen;
    }

    @Override
    public synchronized void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        UpstreamPins.enter(UpstreamPin.MULTI_CONNECTOR_UPDATE_STATE_AFTER_ALLOC);
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
        if (numExternalTokens < 0) {
            throw new IllegalArgumentException("num_external_tokens must be >= 0, got " + numExternalTokens);
        }
        Integer chosen = requestsToConnector.get(request.requestId());
        List<Integer> othersGet = fixes.isOn(Fix.NON_CHOSEN_REAL_BLOCKS) ? blockIds : List.of(); // #46865; before: empty_blocks
        for (int i = 0; i < connectors.size(); i++) {
            boolean isChosen = chosen != null && chosen == i;
            connectors.get(i).updateStateAfterAlloc(request, isChosen ? blockIds : othersGet, isChosen ? numExternalTokens : 0);
        }
        Set<Integer> loaders = new HashSet<>();
        for (int i = 0; i < connectors.size(); i++) {
            if (connectors.get(i).hasUnreportedLoad(request.requestId())) {
                loaders.add(i);
            }
        }
        if (!loaders.isEmpty()) {
            loadsInFlight.put(request.requestId(), loaders);
        }
        if (fixes.isOn(Fix.MULTI_CONNECTOR_LOAD_DEDUP) && loaders.size() > 1) {
            extraAsyncLoads.put(request.requestId(), loaders.size() - 1);
        }
    }

    /** {@code _aggregate_request_finished}: every child is called; {@code (async_saves > 0, merged params)}. */
    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        UpstreamPins.enter(UpstreamPin.MULTI_CONNECTOR_AGGREGATE_REQUEST_FINISHED);
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
        requestFinishedCalls.merge(request.requestId(), 1, Integer::sum);
        int asyncSaves = 0;
        Map<String, Object> params = null;
        Set<Integer> loaders = loadsInFlight.remove(request.requestId());
        for (int i = 0; i < connectors.size(); i++) {
            ChildConnector c = connectors.get(i);
            boolean noBlocksToSave = loaders != null && !loaders.contains(i) && fixes.isOn(Fix.NO_SAVE_WHILE_LOADING);
            RequestFinishedResult r = c.requestFinished(request, noBlocksToSave ? List.of() : blockIds);
            if (r.delayFreeBlocks()) {
                asyncSaves++;
            }
            if (r.kvTransferParams() != null) {
                if (params == null) {
                    params = new HashMap<>();
                }
                for (Map.Entry<String, Object> e : r.kvTransferParams().entrySet()) {
                    params.putIfAbsent(e.getKey(), e.getValue()); // upstream raises on a key clash; the model's children never clash
                }
            }
        }
        if (asyncSaves > 1) {
            extraAsyncSaves.put(request.requestId(), asyncSaves - 1);
        }
        requestsToConnector.remove(request.requestId());
        return new RequestFinishedResult(asyncSaves > 0, params);
    }

    /** Forwarded to every child; a finished_recving ends the scheduler side's view of that load. */
    @Override
    public synchronized void updateConnectorOutput(KvConnectorOutput kvConnectorOutput) {
        UpstreamPins.enter(UpstreamPin.MULTI_CONNECTOR_UPDATE_CONNECTOR_OUTPUT);
        Objects.requireNonNull(kvConnectorOutput, "kvConnectorOutput");
        loadsInFlight.keySet().removeAll(kvConnectorOutput.finishedRecving());
        for (ChildConnector c : connectors) {
            c.updateConnectorOutput(kvConnectorOutput);
        }
    }

    /** {@code build_connector_meta(scheduler_output)}: every child builds its own metadata (its store jobs, its fences). */
    @Override
    public synchronized void buildConnectorMeta(vllmrace.model.sched.SchedulerOutput schedulerOutput) {
        Objects.requireNonNull(schedulerOutput, "schedulerOutput");
        for (ChildConnector c : connectors) {
            c.buildConnectorMeta(schedulerOutput);
        }
    }

    /** {@code build_connector_meta}: the counts move into the metadata and the scheduler-side maps reset to {@code {}}. */
    public synchronized ConnectorMetadata buildConnectorMeta() {
        UpstreamPins.enter(UpstreamPin.MULTI_CONNECTOR_BUILD_CONNECTOR_META);
        ConnectorMetadata meta = new ConnectorMetadata(extraAsyncSaves, extraAsyncLoads);
        extraAsyncSaves = new HashMap<>();
        extraAsyncLoads = new HashMap<>();
        return meta;
    }

    /** {@code bind_connector_metadata}: merges the counts into the worker side. */
    public synchronized void bindConnectorMetadata(ConnectorMetadata metadata) {
        Objects.requireNonNull(metadata, "metadata");
        workerExtraAsyncSaves.putAll(metadata.extraAsyncSaves());
        workerExtraAsyncLoads.putAll(metadata.extraAsyncLoads());
        rankExtraAsyncSaves.forEach(m -> m.putAll(metadata.extraAsyncSaves())); // every rank binds the step's metadata
    }

    /**
     * {@code get_finished_count()} (multi_connector.py@00f4240e): None when any child returns None, else the children's
     * common count.
     *
     * @throws IllegalStateException when two children return different counts ("incompatible finished counts")
     */
    public Integer getFinishedCount() {
        Set<Integer> counts = new HashSet<>();
        for (ChildConnector c : connectors) {
            Integer count = c.getFinishedCount();
            if (count == null) {
                return null;
            }
            counts.add(count);
        }
        if (counts.size() > 1) {
            throw new IllegalStateException("MultiConnector children returned incompatible finished counts: " + counts);
        }
        return counts.iterator().next();
    }

    /** The PCP size: how many workers run this connector. */
    public int pcpSize() {
        return pcpSize;
    }

    /** One worker per PCP rank, in rank order, for {@link KvOutputAggregator}: rank 0 is this connector's {@link #getFinished}. */
    public List<KvConnectorWorker> rankWorkers() {
        List<KvConnectorWorker> workers = new ArrayList<>();
        for (int rank = 0; rank < pcpSize; rank++) {
            int r = rank;
            workers.add(ids -> getFinishedOnRank(r, ids));
        }
        return workers;
    }

    /**
     * The worker on PCP rank {@code rank}, one poll: rank 0 is {@link #getFinished}; a rank above 0 asks each child's
     * worker on that rank and absorbs sends by its own {@code _extra_async_saves}, as rank 0 does (receives: a plain
     * union; #52779 rejects PCP consumers, so no load runs there).
     *
     * @throws IllegalArgumentException for a rank outside [0, pcp_size) (nothing changes)
     */
    public synchronized KvConnectorOutput getFinishedOnRank(int rank, Set<String> finishedReqIds) {
        if (rank < 0 || rank >= pcpSize) {
            throw new IllegalArgumentException("PCP rank " + rank + " is outside [0, " + pcpSize + ")");
        }
        Objects.requireNonNull(finishedReqIds, "finishedReqIds");
        if (rank == 0) {
            return getFinished(finishedReqIds);
        }
        Map<String, Integer> counts = rankExtraAsyncSaves.get(rank - 1);
        Set<String> sending = new LinkedHashSet<>();
        Set<String> recving = new LinkedHashSet<>();
        Set<Integer> invalid = new LinkedHashSet<>();
        for (ChildConnector c : connectors) {
            KvConnectorOutput out = c.getFinishedOnRank(rank, finishedReqIds);
            recving.addAll(out.finishedRecving());
            for (String id : out.finishedSending()) {
                if (!absorb(counts, id)) {
                    sending.add(id);
                }
            }
            invalid.addAll(out.invalidBlockIds());
        }
        return new KvConnectorOutput(sending, recving, invalid);
    }

    /**
     * Worker {@code get_finished}: binds the pending metadata, then asks each child. Sends: an id with an extra count is
     * absorbed (count decremented, entry deleted at 1) and reported only by the last child. Recvs: plain union, or with
     * seed 003 (1) the same count-down on {@code extraAsyncLoads}.
     */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        UpstreamPins.enter(UpstreamPin.MULTI_CONNECTOR_GET_TRANSFER_RESULTS);
        Objects.requireNonNull(finishedReqIds, "finishedReqIds");
        bindConnectorMetadata(buildConnectorMeta());
        Set<String> sending = new LinkedHashSet<>();
        Set<String> recving = new LinkedHashSet<>();
        Set<Integer> invalid = new LinkedHashSet<>();
        for (ChildConnector c : connectors) {
            KvConnectorOutput out = c.getFinished(finishedReqIds);
            for (String id : out.finishedRecving()) {
                if (fixes.isOn(Fix.MULTI_CONNECTOR_LOAD_DEDUP) && absorb(workerExtraAsyncLoads, id)) {
                    continue;
                }
                recving.add(id); // finished_recving.update(recving or ())
            }
            for (String id : out.finishedSending()) {
                if (absorb(workerExtraAsyncSaves, id)) {
                    continue;
                }
                sending.add(id);
            }
            invalid.addAll(out.invalidBlockIds());
        }
        return new KvConnectorOutput(sending, recving, invalid);
    }

    /** {@code extra_pending = counts.get(req_id)}: true (absorbed) while more reports of the id are still to come. */
    private static boolean absorb(Map<String, Integer> counts, String id) {
        Integer extra = counts.get(id);
        if (extra == null) {
            return false;
        }
        if (extra == 1) {
            counts.remove(id);
        } else {
            counts.put(id, extra - 1);
        }
        return true;
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        for (ChildConnector c : connectors) {
            if (c.hasPendingTransfer(requestId)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        List<TransferTarget> targets = new ArrayList<>();
        for (ChildConnector c : connectors) {
            targets.addAll(c.inFlightLoadTargets());
        }
        return targets;
    }

    /** {@code _requests_to_connector.get(id)}: the index of the child chosen to load the request, or null. */
    public synchronized Integer chosenConnector(String requestId) {
        return requestsToConnector.get(requestId);
    }

    /** Worker-side {@code _extra_async_saves} (bound counts not yet drained), for tests and CN3. */
    public synchronized Map<String, Integer> workerExtraAsyncSaves() {
        return Map.copyOf(workerExtraAsyncSaves);
    }

    /** Worker-side {@code _extra_async_saves} on PCP rank {@code rank} (bound counts not yet drained), for tests. */
    public synchronized Map<String, Integer> workerExtraAsyncSaves(int rank) {
        if (rank < 0 || rank >= pcpSize) {
            throw new IllegalArgumentException("PCP rank " + rank + " is outside [0, " + pcpSize + ")");
        }
        return Map.copyOf(rank == 0 ? workerExtraAsyncSaves : rankExtraAsyncSaves.get(rank - 1));
    }

    /** Worker-side extra async loads (seed 003 (1)), for tests. */
    public synchronized Map<String, Integer> workerExtraAsyncLoads() {
        return Map.copyOf(workerExtraAsyncLoads);
    }

    /** How many times the scheduler called {@code request_finished} for {@code requestId} (an observation, not upstream state). */
    public synchronized int requestFinishedCalls(String requestId) {
        return requestFinishedCalls.getOrDefault(requestId, 0);
    }
}
