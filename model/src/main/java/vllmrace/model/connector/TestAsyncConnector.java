package vllmrace.model.connector;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.kv.TransferTarget;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;
import vllmrace.model.sched.SchedulerOutput;

/**
 * A KV connector, both roles, whose async loads and saves complete only when the scenario says so
 * ({@link #completeLoad}, {@link #completeSave}, {@link #finishInFlightTransfers}). Shaped after the
 * connectors of lifecycle §3: the decision in {@link #requestFinished} follows a {@link SavePolicy} taken from
 * {@code nixl/pull_scheduler.py}, {@code NixlPullConnectorScheduler.request_finished} (decode side: never;
 * prefill side: only for a normal finish) or from a connector that async-saves every finished request (the
 * LMCache case of #33377). Upstream the two roles are separate objects that talk through connector metadata;
 * here they share state, and the worker honours the contract's ordering: a save is reported only after the
 * worker saw its id in {@code finished_req_ids} (CN2), and each transfer is reported exactly once.
 *
 * <p>An async load snapshots its destination blocks when it starts ({@link KvCacheManager#beginTransfer}) and
 * writes them when it completes ({@link KvCacheManager#completeWrite}): a load landing in blocks the request no
 * longer owns is recorded by the KV detector (SC4).
 *
 * <p>Thread-safe: every method is synchronized on the connector.
 */
public final class TestAsyncConnector implements KvConnectorBaseV1, KvConnectorWorker, PendingTransfers {

    /** When {@code request_finished} asks to delay the free (an async save/send of the blocks). */
    public enum SavePolicy {
        /** NIXL decode side without bidirectional transfer: {@code (False, None)}, the blocks are never taken over. */
        NEVER,
        /** NIXL prefill side: only a normal finish (FINISHED_STOPPED, FINISHED_LENGTH_CAPPED) is sent to the decoder. */
        ON_SUCCESS,
        /** A connector that async-saves every finished request, aborted ones included (LMCache; #33377). */
        ALWAYS
    }

    private static final class Transfer {
        final String requestId;
        final TransferTarget target; // loads only
        boolean done;
        boolean lost; // the remote side never pushes: no completion will ever come
        int failedFrom = -1; // index of the first invalid block, -1: the load succeeded

        Transfer(String requestId, TransferTarget target) {
            this.requestId = requestId;
            this.target = target;
        }
    }

    private final KvCacheManager kvCacheManager;
    private final SavePolicy savePolicy;
    private final Map<String, Integer> remotePrefill = new HashMap<>();
    private final Map<String, Transfer> loads = new LinkedHashMap<>();
    private final List<Transfer> saves = new ArrayList<>();
    private final Set<String> seenFinished = new HashSet<>();
    private final Map<String, Integer> requestFinishedCalls = new HashMap<>();
    private final Map<String, SavePolicy> savePolicyOverrides = new HashMap<>();
    private final Set<String> chunksBeingWritten = new HashSet<>();
    private final Set<String> storeWhileRunning = new HashSet<>();
    private final List<Transfer> stores = new ArrayList<>();
    private final FixSet fixes;

    public TestAsyncConnector(KvCacheManager kvCacheManager, SavePolicy savePolicy) {
        this(kvCacheManager, savePolicy, FixSet.none());
    }

    /** As {@link #TestAsyncConnector(KvCacheManager, SavePolicy)}; {@code fixes} decides {@link Fix#STORE_JOB_BLOCK_REF}. */
    public TestAsyncConnector(KvCacheManager kvCacheManager, SavePolicy savePolicy, FixSet fixes) {
        this.kvCacheManager = Objects.requireNonNull(kvCacheManager, "kvCacheManager");
        this.savePolicy = Objects.requireNonNull(savePolicy, "savePolicy");
        this.fixes = Objects.requireNonNull(fixes, "fixes");
    }

    /**
     * Scenario set-up: the connector stores {@code requestId}'s KV while it runs (a MooncakeStore-like offload): the first
     * {@code build_connector_meta} that schedules it emits a store job that reads its blocks later, on a background thread.
     */
    public synchronized void storeWhileRunning(String requestId) {
        storeWhileRunning.add(Objects.requireNonNull(requestId, "requestId"));
    }

    /**
     * {@code build_connector_meta}: one store job per scheduled request set up to store, snapshotting its blocks; with
     * {@link Fix#STORE_JOB_BLOCK_REF} (#52372, {@code _reference_save_blocks}) the job takes its own block reference.
     */
    @Override
    public synchronized void buildConnectorMeta(SchedulerOutput schedulerOutput) {
        for (String id : schedulerOutput.numScheduledTokens().keySet()) {
            if (storeWhileRunning.remove(id)) {
                Transfer store = new Transfer(id, kvCacheManager.beginTransfer(id));
                if (fixes.isOn(Fix.STORE_JOB_BLOCK_REF)) {
                    kvCacheManager.reference(store.target);
                }
                stores.add(store);
            }
        }
    }

    /**
     * The store thread: the oldest store job of {@code requestId} reads its blocks and PUTs them under the request's key;
     * its block reference, if it took one, is dropped.
     *
     * @throws UnknownTransferException if no store job of that id is in flight (nothing changes)
     */
    public synchronized void completeStore(String requestId) {
        Objects.requireNonNull(requestId, "requestId");
        for (Iterator<Transfer> it = stores.iterator(); it.hasNext(); ) {
            Transfer store = it.next();
            if (store.requestId.equals(requestId)) {
                it.remove();
                finishStore(store);
                return;
            }
        }
        throw new UnknownTransferException("no store job of request " + requestId + " is in flight");
    }

    /** Whether a store job of {@code requestId} is in flight (emitted, its blocks not read yet). */
    public synchronized boolean hasStoreJob(String requestId) {
        return stores.stream().anyMatch(s -> s.requestId.equals(requestId));
    }

    /** The store thread drains its queue: every store job in flight reads its blocks, oldest first. */
    public synchronized void completeAllStores() {
        while (!stores.isEmpty()) {
            finishStore(stores.remove(0));
        }
    }

    private void finishStore(Transfer store) {
        kvCacheManager.completeRead(store.target);
        if (fixes.isOn(Fix.STORE_JOB_BLOCK_REF)) {
            kvCacheManager.release(store.target);
        }
    }

    /**
     * Scenario set-up: the first {@code numTokens} tokens of {@code requestId}'s prompt are on a remote
     * instance ({@code kv_transfer_params.do_remote_prefill}), to be loaded asynchronously.
     */
    public synchronized void remotePrefill(String requestId, int numTokens) {
        Objects.requireNonNull(requestId, "requestId");
        if (numTokens <= 0) {
            throw new IllegalArgumentException("remote prefill needs a positive token count, got " + numTokens);
        }
        remotePrefill.put(requestId, numTokens);
    }

    /**
     * Scenario set-up: {@code requestId} follows {@code policy} instead of the connector's (one connector serving
     * requests of two kinds, e.g. a decode-side pull that never saves next to saved local requests).
     */
    public synchronized void savePolicy(String requestId, SavePolicy policy) {
        savePolicyOverrides.put(Objects.requireNonNull(requestId, "requestId"), Objects.requireNonNull(policy, "policy"));
    }

    /**
     * Scenario set-up: a chunk of {@code requestId}'s prefix is still being written (an offloading connector), so
     * {@code get_num_new_matched_tokens} answers None, "ask again later", until {@link #chunkWritten}.
     */
    public synchronized void chunkBeingWritten(String requestId) {
        chunksBeingWritten.add(Objects.requireNonNull(requestId, "requestId"));
    }

    /**
     * Worker: the chunk of {@code requestId} is written; the next lookup answers (no external tokens).
     *
     * @throws UnknownTransferException if no chunk of that id is being written (nothing changes)
     */
    public synchronized void chunkWritten(String requestId) {
        if (!chunksBeingWritten.remove(Objects.requireNonNull(requestId, "requestId"))) {
            throw new UnknownTransferException("no chunk of request " + requestId + " is being written");
        }
    }

    /**
     * Environment: the remote side of {@code requestId}'s in-flight async load never pushes (it crashed, aborted too,
     * or its notification was lost, #46283): {@link #finishInFlightTransfers} never completes it; only an explicit
     * {@link #completeLoad} (a push arriving late) still can.
     *
     * @throws UnknownTransferException if no load of that id is in flight (nothing changes)
     */
    public synchronized void loseLoad(String requestId) {
        inFlightLoad(requestId).lost = true;
    }

    /** True while a chunk of {@code requestId} is being written ({@link #chunkBeingWritten}). */
    public synchronized boolean isChunkBeingWritten(String requestId) {
        return chunksBeingWritten.contains(requestId);
    }

    /** True while an async load of {@code requestId} is in flight (started, not completed, lost or not). */
    public synchronized boolean isLoading(String requestId) {
        Transfer load = loads.get(requestId);
        return load != null && !load.done;
    }

    /** The environment, at quiescence: every chunk being written is written. Returns how many were. */
    public synchronized int writeAllChunks() {
        int n = chunksBeingWritten.size();
        chunksBeingWritten.clear();
        return n;
    }

    /** The remote side's lease reaper stops {@code requestId}'s push: an in-flight load of it never lands. */
    @Override
    public synchronized void remoteLeaseExpired(String requestId) {
        Transfer load = loads.get(Objects.requireNonNull(requestId, "requestId"));
        if (load != null && !load.done) {
            load.lost = true;
        }
    }

    @Override
    public synchronized MatchedTokens getNumNewMatchedTokens(Request request, int numComputedTokens) {
        if (chunksBeingWritten.contains(request.requestId())) {
            return MatchedTokens.ASK_AGAIN_LATER;
        }
        Integer remote = remotePrefill.get(request.requestId());
        if (remote == null || numComputedTokens > 0) {
            return MatchedTokens.NONE;
        }
        return new MatchedTokens(remote, true);
    }

    /** Starts the async load into the allocated blocks; {@code do_remote_prefill} becomes False (one load per request). */
    @Override
    public synchronized void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        if (numExternalTokens > 0 && remotePrefill.remove(request.requestId()) != null) {
            loads.put(request.requestId(), new Transfer(request.requestId(), kvCacheManager.beginTransfer(request.requestId())));
        }
    }

    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        requestFinishedCalls.merge(request.requestId(), 1, Integer::sum);
        RequestStatus status = request.status();
        boolean save = switch (savePolicyOverrides.getOrDefault(request.requestId(), savePolicy)) {
            case NEVER -> false;
            case ON_SUCCESS -> status == RequestStatus.FINISHED_STOPPED || status == RequestStatus.FINISHED_LENGTH_CAPPED;
            case ALWAYS -> true;
        };
        if (!save || blockIds.isEmpty()) {
            return RequestFinishedResult.FREE_NOW;
        }
        saves.add(new Transfer(request.requestId(), null));
        return new RequestFinishedResult(true, Map.of("remote_block_ids", List.copyOf(blockIds)));
    }

    /**
     * The role its save policy plays: the NIXL prefill side ({@link SavePolicy#ON_SUCCESS}) is {@code kv_producer}, the
     * NIXL decode side ({@link SavePolicy#NEVER}) {@code kv_consumer}, an offloader that loads and saves every finished
     * request ({@link SavePolicy#ALWAYS}, LMCache) {@code kv_both}, which upstream's base class counts as a producer: it
     * requires KV delivery, as LMCache's connectors do (none overrides {@code requires_kv_delivery}).
     */
    @Override
    public KvRole kvRole() {
        return switch (savePolicy) {
            case ON_SUCCESS -> KvRole.KV_PRODUCER;
            case NEVER -> KvRole.KV_CONSUMER;
            case ALWAYS -> KvRole.KV_BOTH;
        };
    }

    @Override
    public synchronized void updateConnectorOutput(KvConnectorOutput kvConnectorOutput) {
        Objects.requireNonNull(kvConnectorOutput, "kvConnectorOutput");
    }

    /**
     * Worker: reports every load completed since the last call, and every completed save whose id the worker has
     * seen in {@code finished_req_ids} (this call or a prior one). Each transfer is reported once; two saves of
     * one id (a second {@code request_finished}) are reported in two calls, as {@code finished_sending} is a set.
     */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        seenFinished.addAll(Objects.requireNonNull(finishedReqIds, "finishedReqIds"));
        Set<String> recving = new LinkedHashSet<>();
        Set<Integer> invalid = new LinkedHashSet<>();
        for (Iterator<Transfer> it = loads.values().iterator(); it.hasNext(); ) {
            Transfer load = it.next();
            if (load.done) {
                recving.add(load.requestId);
                if (load.failedFrom >= 0) {
                    List<Integer> ids = load.target.blockIds();
                    invalid.addAll(ids.subList(load.failedFrom, ids.size()));
                }
                it.remove();
            }
        }
        Set<String> sending = new LinkedHashSet<>();
        for (Iterator<Transfer> it = saves.iterator(); it.hasNext(); ) {
            Transfer save = it.next();
            if (save.done && seenFinished.contains(save.requestId) && sending.add(save.requestId)) {
                it.remove();
            }
        }
        return new KvConnectorOutput(sending, recving, invalid);
    }

    /**
     * Worker: the async load of {@code requestId} lands in the blocks it was started into.
     *
     * @throws UnknownTransferException if no load of that id is in flight (nothing changes)
     */
    public synchronized void completeLoad(String requestId) {
        Transfer load = inFlightLoad(requestId);
        kvCacheManager.completeWrite(load.target);
        load.done = true;
    }

    /**
     * Worker: the async load of {@code requestId} fails; its blocks are reported in {@code invalid_block_ids} and
     * the request in {@code finished_recving} ("even if failures occur, the request must still be reported").
     *
     * @throws UnknownTransferException if no load of that id is in flight (nothing changes)
     */
    public synchronized void failLoad(String requestId) {
        failLoad(requestId, 0);
    }

    /**
     * As {@link #failLoad(String)}, the blocks before {@code firstInvalidBlock} written (valid), that one and the rest not.
     *
     * @throws UnknownTransferException if no load of that id is in flight; IllegalArgumentException if the index is not
     *     one of the load's blocks (nothing changes)
     */
    public synchronized void failLoad(String requestId, int firstInvalidBlock) {
        Transfer load = inFlightLoad(requestId);
        if (firstInvalidBlock < 0 || firstInvalidBlock >= load.target.blockIds().size()) {
            throw new IllegalArgumentException("load of " + requestId + " has " + load.target.blockIds().size()
                    + " block(s); no block " + firstInvalidBlock);
        }
        load.done = true;
        load.failedFrom = firstInvalidBlock;
    }

    /**
     * Worker: the oldest in-flight save/send of {@code requestId} completes.
     *
     * @throws UnknownTransferException if no save of that id is in flight (nothing changes)
     */
    public synchronized void completeSave(String requestId) {
        Objects.requireNonNull(requestId, "requestId");
        for (Transfer save : saves) {
            if (save.requestId.equals(requestId) && !save.done) {
                save.done = true;
                return;
            }
        }
        throw new UnknownTransferException("no async save of request " + requestId + " is in flight");
    }

    /** Worker: every in-flight load and save completes now. Returns how many did. */
    public synchronized int finishInFlightTransfers() {
        int n = 0;
        for (Transfer load : loads.values()) {
            if (!load.done && !load.lost) {
                kvCacheManager.completeWrite(load.target);
                load.done = true;
                n++;
            }
        }
        for (Transfer save : saves) {
            if (!save.done) {
                save.done = true;
                n++;
            }
        }
        for (Transfer store : stores) {
            finishStore(store);
            n++;
        }
        stores.clear();
        return n;
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return loads.containsKey(requestId) || saves.stream().anyMatch(s -> s.requestId.equals(requestId))
                || stores.stream().anyMatch(s -> s.requestId.equals(requestId));
    }

    /** True when no transfer is in flight or waiting to be reported. */
    public synchronized boolean isIdle() {
        return loads.isEmpty() && saves.isEmpty() && stores.isEmpty();
    }

    /** What a further event can still change: each transfer with its state, and the chunks being written. */
    public synchronized String progressSignature() {
        StringBuilder b = new StringBuilder();
        loads.values().forEach(l -> b.append("load ").append(l.requestId).append(l.done ? " done" : l.lost ? " lost" : "").append(';'));
        saves.forEach(t -> b.append("save ").append(t.requestId).append(t.done ? " done" : "").append(';'));
        stores.forEach(t -> b.append("store ").append(t.requestId).append(';'));
        return b.append(chunksBeingWritten).toString();
    }

    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        List<TransferTarget> pinned = new ArrayList<>(loads.values().stream().filter(l -> !l.done).map(l -> l.target).toList());
        stores.forEach(store -> pinned.add(store.target)); // a store job still reads its blocks
        return pinned;
    }

    /** How often {@code request_finished} ran for {@code requestId} (contract: exactly once). */
    public synchronized int requestFinishedCalls(String requestId) {
        return requestFinishedCalls.getOrDefault(requestId, 0);
    }

    private Transfer inFlightLoad(String requestId) {
        Objects.requireNonNull(requestId, "requestId");
        Transfer load = loads.get(requestId);
        if (load == null || load.done) {
            throw new UnknownTransferException("no async load of request " + requestId + " is in flight");
        }
        return load;
    }
}
