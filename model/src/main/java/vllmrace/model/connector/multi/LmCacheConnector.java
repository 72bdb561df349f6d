package vllmrace.model.connector.multi;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.MatchedTokens;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.deploy.ConfigSwitch;
import vllmrace.model.deploy.Configuration;
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
 * An LMCache-like connector ({@code kv_role: kv_both}): vLLM's in-tree
 * {@code vllm/distributed/kv_transfer/kv_connector/v1/lmcache_mp_connector.py}, {@code LMCacheMPConnector}, or LMCache's
 * own out-of-tree MP connector (the deployment's {@link ConfigSwitch#OUT_OF_TREE_LMCACHE_MP}). Scheduler side:
 * {@code get_num_new_matched_tokens} reports a CPU-cache prefix hit as an async load; {@code update_state_after_alloc}
 * starts the retrieve into the blocks it is given when it has a hit. The in-tree connector with
 * {@link Fix#LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN} (#47505: {@code condition = tracker.needs_retrieve() and
 * num_external_tokens > 0}) does so only when MultiConnector chose it; before #47505, and in the out-of-tree connector,
 * a non-chosen child given the real blocks (#46865) loads anyway (seed 003's second load). {@code request_finished}
 * starts an async save of every finished request when {@code saveEveryFinished} (aborted ones included; #33377, #46240).
 * Worker side: {@code get_finished} reports completed loads, and completed saves once their id was seen in
 * {@code finished_req_ids} (CN2), and a failed load's blocks as {@code invalid_block_ids}. Each transfer is reported exactly once.
 *
 * <p>A load snapshots its destination blocks when it starts and writes them when it completes; a save snapshots the
 * blocks it reads at {@code request_finished} and checks them when it completes: either touching a block its request
 * no longer owns is recorded by the KV detector as {@code WRITE_INTO_FREED_BLOCK}.
 *
 * <p>Lookup locks: {@code get_num_new_matched_tokens} submits a lookup ({@code maybe_submit_lookup_request}), and the
 * LMCache server holds read locks on the chunks it matched while the request tracker is PREFETCHING. Only
 * {@code update_state_after_alloc}'s PREFETCHING branch releases them ({@code cleanup_lookup_result}, and since #35931
 * {@code free_lookup_locks} for the chunks vLLM computes; the rest are released by the retrieve). A request that ends
 * before it was allocated goes through {@code request_finished}: {@code _cleanup_request_tracker} only pops the tracker
 * (vLLM's lmcache_mp_connector.py@474b0b8c, LMCache's own @5edba3af), so the locks stay until the server's read-lock
 * TTL ({@code --l1-read-ttl-seconds}, 300 s by default): recorded as {@link ViolationKind#LOOKUP_LOCKS_LEAKED}. With
 * {@link Fix#FREE_LOOKUP_LOCKS_ON_CLEANUP} (#44101, proposed) the cleanup frees them.
 *
 * <p>A request that finishes while this child's own retrieve of it is unreported (an abort inside the load's window):
 * upstream's {@code request_finished} returns True whatever happened, no store was submitted (nothing of the request
 * was scheduled), and LMCache's worker adapter ({@code LMCacheMPWorkerAdapter.get_finished}, vllm_multi_process_adapter.py
 * at LMCache@39d632ad) puts every engine-finished id with no store future into {@code ret_stores}: a made-up
 * finished_sending at the first poll that sees the id, the retrieve still in flight or already reported. Two terminal
 * events (LMCache #4938). With {@link Fix#LMCACHE_MP_ABORTED_RETRIEVE_NOT_STORED} (LMCache #4939, proposed, in
 * LMCache's adapter, so in either connector that runs a fixed LMCache; {@link #outOfTree} is a version without it) the
 * retrieve's finished_recving is the only one. The model's {@code saveEveryFinished} off stands for a deployment whose
 * requests end with nothing to store: there upstream's made-up send and the model's immediate free are the same event,
 * except in this window, which the model follows in both modes. A request this child loaded has nothing to save (its
 * hit counts as stored: {@code tracker.increase_num_stored_blocks(num_lmcache_blocks)}): a saving child returns True and
 * makes up the send, reading no block. The offloader ({@link #offloader}) has no made-up sends: a request whose KV it
 * loaded, or is loading, is freed at once (offloading_connector.py returns True only while a store of the request runs,
 * and none runs for KV it loaded); any other finished request is saved.
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public final class LmCacheConnector extends AsyncLoadingChild {
    private final boolean saveEveryFinished;
    private final FixSet fixes;
    private final Configuration configuration;
    private final List<AsyncTransfer> saves = new ArrayList<>();
    /** Requests whose tracker is PREFETCHING with a lookup that holds read locks on the LMCache server. */
    private final Set<String> lookupLocks = new LinkedHashSet<>();
    /** Finished requests whose retrieve was unreported at request_finished: the worker's made-up finished_sending. */
    private final Set<String> madeUpSends = new LinkedHashSet<>();

    /** Whether this is LMCache's MP connector (its worker adapter makes up sends), not an offloader standing in for one. */
    private final boolean mpAdapter;

    /** The LMCache child a deployment runs: in tree, or LMCache's own when {@code configuration} says so. */
    public LmCacheConnector(String name, KvCacheManager kvCacheManager, boolean saveEveryFinished, FixSet fixes,
                            Configuration configuration) {
        this(name, kvCacheManager, saveEveryFinished, fixes, configuration, true);
    }

    private LmCacheConnector(String name, KvCacheManager kvCacheManager, boolean saveEveryFinished, FixSet fixes,
                             Configuration configuration, boolean mpAdapter) {
        super(name, kvCacheManager);
        this.saveEveryFinished = saveEveryFinished;
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.configuration = Objects.requireNonNull(configuration, "configuration");
        this.mpAdapter = mpAdapter;
    }

    /**
     * An offloader beside the LMCache child ({@code OffloadingConnector}'s per-request design), saving every finished
     * request: as this class, but without LMCache's worker adapter, so it never makes up a finished_sending.
     */
    public static LmCacheConnector offloader(String name, KvCacheManager kvCacheManager, FixSet fixes, Configuration configuration) {
        return new LmCacheConnector(name, kvCacheManager, true, fixes, configuration, false);
    }

    /** LMCache's own MP connector (out of tree): loads whenever it has a hit, chosen or not. */
    public static LmCacheConnector outOfTree(String name, KvCacheManager kvCacheManager, boolean saveEveryFinished) {
        return new LmCacheConnector(name, kvCacheManager, saveEveryFinished, FixSet.none(),
                Configuration.of(ConfigSwitch.OUT_OF_TREE_LMCACHE_MP));
    }

    /** {@code update_state_after_alloc}: the retrieve, unless this child was not chosen and honours that (#47505). */
    /**
     * {@code kv_both} (an offloader loads and saves). Neither LMCache connector overrides {@code requires_kv_delivery},
     * so by the base class's default ({@code is_kv_producer}) it requires delivery, although the base's docstring says
     * "Best-effort caches return False".
     */
    @Override
    public vllmrace.model.connector.KvRole kvRole() {
        return vllmrace.model.connector.KvRole.KV_BOTH;
    }

    @Override
    public synchronized void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        UpstreamPins.enter(UpstreamPin.LMCACHE_MP_UPDATE_STATE_AFTER_ALLOC);
        boolean inTree = !configuration.isOn(ConfigSwitch.OUT_OF_TREE_LMCACHE_MP);
        if (numExternalTokens == 0 && inTree && fixes.isOn(Fix.LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN)) {
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(blockIds, "blockIds");
            lookupLocks.remove(request.requestId()); // PREFETCHING branch: cleanup_lookup_result, free_lookup_locks (#35931)
            return; // condition = tracker.needs_retrieve() and num_external_tokens > 0
        }
        super.updateStateAfterAlloc(request, blockIds, numExternalTokens);
        lookupLocks.remove(request.requestId()); // the rest of the locks go with the retrieve
    }

    /**
     * Set-up: the CPU cache holds the first {@code numTokens} tokens of {@code requestId}'s prompt (an earlier turn).
     *
     * @throws IllegalArgumentException for a token count below 1 (nothing changes)
     */
    public void cachedPrefix(String requestId, int numTokens) {
        offerPrefix(requestId, numTokens, "a cached prefix");
    }

    /**
     * {@code get_num_new_matched_tokens}: the hit, but nothing for a preempted request ("TODO: support loading KV for
     * preempted requests in the future": {@code if request.status == RequestStatus.PREEMPTED: return 0, False}). A hit
     * this child was not chosen to load stays offered, and would otherwise be loaded when the request is re-admitted.
     */
    @Override
    public synchronized MatchedTokens getNumNewMatchedTokens(Request request, int numComputedTokens) {
        MatchedTokens matched = super.getNumNewMatchedTokens(request, numComputedTokens);
        if (request.status() == RequestStatus.PREEMPTED) {
            return MatchedTokens.NONE;
        }
        if (matched.loadKvAsync()) {
            lookupLocks.add(request.requestId()); // maybe_submit_lookup_request: the matched chunks read-locked
        }
        return matched;
    }

    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        countRequestFinished(request, blockIds);
        if (lookupLocks.remove(request.requestId()) && !fixes.isOn(Fix.FREE_LOOKUP_LOCKS_ON_CLEANUP)) { // _cleanup_request_tracker
            kvCacheManager.violations().record(ViolationKind.LOOKUP_LOCKS_LEAKED, request.requestId(), name() + ": "
                    + request.requestId() + " ended while its tracker was PREFETCHING; _cleanup_request_tracker only pops the tracker, "
                    + "so the LMCache server keeps the lookup's read locks until their TTL (300 s by default) and cannot evict those chunks");
        }
        if (loaded(request.requestId())) { // KV this child loaded (or is loading) is stored already: no store runs for it
            if (!mpAdapter) {
                return RequestFinishedResult.FREE_NOW; // the offloader: True only while a store runs
            }
            if (hasUnreportedLoad(request.requestId())) { // its own retrieve still owes its finished_recving
                if (!fixes.isOn(Fix.LMCACHE_MP_ABORTED_RETRIEVE_NOT_STORED)) { // LMCache's adapter: either connector has it
                    madeUpSends.add(request.requestId()); // no store future: get_finished puts the id in ret_stores
                }
                return new RequestFinishedResult(true, null); // request_finished: return True, None
            }
            if (saveEveryFinished) { // the worker's made-up send frees it
                madeUpSends.add(request.requestId());
                return new RequestFinishedResult(true, null);
            }
        }
        if (!saveEveryFinished || blockIds.isEmpty()) {
            return RequestFinishedResult.FREE_NOW;
        }
        saves.add(new AsyncTransfer(request.requestId(), kvCacheManager.beginTransfer(request.requestId())));
        return new RequestFinishedResult(true, Map.of("lmcache_saved", Boolean.TRUE));
    }

    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        seenFinished.addAll(Objects.requireNonNull(finishedReqIds, "finishedReqIds"));
        Set<String> recving = new LinkedHashSet<>();
        Set<Integer> invalid = new LinkedHashSet<>();
        for (Iterator<AsyncTransfer> it = loads.values().iterator(); it.hasNext(); ) {
            AsyncTransfer load = it.next();
            if (load.done) {
                recving.add(load.requestId);
                invalid.addAll(invalidBlocksOf(load));
                it.remove();
            }
        }
        Set<String> sending = new LinkedHashSet<>();
        for (Iterator<AsyncTransfer> it = saves.iterator(); it.hasNext(); ) {
            AsyncTransfer save = it.next();
            if (save.done && seenFinished.contains(save.requestId) && sending.add(save.requestId)) {
                it.remove();
            }
        }
        for (Iterator<String> it = madeUpSends.iterator(); it.hasNext(); ) {
            String id = it.next();
            if (seenFinished.contains(id)) { // ret_stores: an engine-finished id with no store future
                sending.add(id);
                it.remove();
            }
        }
        return new KvConnectorOutput(sending, recving, invalid);
    }

    /**
     * Worker: the load of {@code requestId} from the CPU cache lands in its blocks.
     *
     * @throws UnknownTransferException if no load of that id is in flight (a duplicate or unknown report; nothing changes)
     */
    public void completeLoad(String requestId) {
        completeLoadOf(requestId, "async load");
    }

    /**
     * Worker: the retrieve of {@code requestId} from the CPU cache fails: nothing is written; the load is reported done
     * with its blocks invalid.
     *
     * @throws UnknownTransferException if no load of that id is in flight (a duplicate or unknown report; nothing changes)
     */
    public void failLoad(String requestId) {
        failLoadOf(requestId, "async load");
    }

    /**
     * Worker: the oldest in-flight save of {@code requestId} completes (it read the blocks it snapshotted).
     *
     * @throws UnknownTransferException if no save of that id is in flight (nothing changes)
     */
    public synchronized void completeSave(String requestId) {
        Objects.requireNonNull(requestId, "requestId");
        for (AsyncTransfer save : saves) {
            if (save.requestId.equals(requestId) && !save.done) {
                kvCacheManager.completeWrite(save.target);
                save.done = true;
                return;
            }
        }
        throw new UnknownTransferException(name() + ": no async save of request " + requestId + " is in flight");
    }

    /** Worker: every in-flight load and save completes now. Returns how many did. */
    @Override
    public synchronized int finishInFlightTransfers() {
        return completeAll(loads.values()) + completeAll(saves);
    }

    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return loads.containsKey(requestId) || madeUpSends.contains(requestId)
                || saves.stream().anyMatch(s -> s.requestId.equals(requestId));
    }

    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        List<TransferTarget> targets = new ArrayList<>();
        loads.values().stream().filter(l -> !l.done).forEach(l -> targets.add(l.target));
        saves.stream().filter(s -> !s.done).forEach(s -> targets.add(s.target));
        return targets;
    }

    @Override
    public synchronized boolean isIdle() {
        return loads.isEmpty() && saves.isEmpty() && madeUpSends.isEmpty();
    }

    /** Whether the LMCache server holds lookup read locks for {@code requestId} (its tracker PREFETCHING). */
    public synchronized boolean holdsLookupLocks(String requestId) {
        return lookupLocks.contains(requestId);
    }
}
