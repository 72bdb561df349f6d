package vllmrace.model.connector.multi;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.List;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.MatchedTokens;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;

/**
 * What the model's two async-loading children share (the scheduler-side half of {@code KVConnectorBase_V1} for an
 * external prefix, plus the worker's completion of a load): a prefix offered per request
 * ({@code get_num_new_matched_tokens} reports it as an async load), a load started into the request's real blocks at
 * {@code update_state_after_alloc} whenever the child has a prefix for it and is given blocks (a subclass may honour
 * {@code num_external_tokens = 0} as "not chosen"), the load's completion writing the blocks it snapshotted, and the
 * {@code request_finished} call count (contract: exactly once). Subclasses decide what {@code request_finished}
 * returns and how completions are reported by {@code get_finished}.
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
abstract class AsyncLoadingChild implements ChildConnector {
    private final String name;
    protected final KvCacheManager kvCacheManager;
    private final Map<String, Integer> offeredPrefix = new HashMap<>();
    /** Loads started and not yet reported by {@code get_finished}, in start order. */
    protected final Map<String, AsyncTransfer> loads = new LinkedHashMap<>();
    /** Ids seen in {@code finished_req_ids} (CN2: a send may be reported only after its id was seen). */
    protected final Set<String> seenFinished = new HashSet<>();
    private final Map<String, Integer> requestFinishedCalls = new HashMap<>();
    /** Requests this child started a load for: their prompt is in its cache already. */
    private final Set<String> loaded = new HashSet<>();

    AsyncLoadingChild(String name, KvCacheManager kvCacheManager) {
        this.name = Objects.requireNonNull(name, "name");
        this.kvCacheManager = Objects.requireNonNull(kvCacheManager, "kvCacheManager");
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * Set-up: the first {@code numTokens} prompt tokens of {@code requestId} can be loaded from outside.
     *
     * @throws IllegalArgumentException for a token count below 1 (nothing changes)
     */
    protected final synchronized void offerPrefix(String requestId, int numTokens, String what) {
        Objects.requireNonNull(requestId, "requestId");
        if (numTokens <= 0) {
            throw new IllegalArgumentException(what + " needs a positive token count, got " + numTokens);
        }
        offeredPrefix.put(requestId, numTokens);
    }

    @Override
    public synchronized MatchedTokens getNumNewMatchedTokens(Request request, int numComputedTokens) {
        Objects.requireNonNull(request, "request");
        if (numComputedTokens < 0) {
            throw new IllegalArgumentException("num_computed_tokens must be >= 0, got " + numComputedTokens);
        }
        Integer offered = offeredPrefix.get(request.requestId());
        return offered == null || numComputedTokens > 0 ? MatchedTokens.NONE : new MatchedTokens(offered, true);
    }

    /**
     * Starts the load of an offered prefix into the blocks it is given, whatever {@code num_external_tokens} says: the
     * base behaviour a subclass narrows when it honours 0 as "not chosen, do not load". Given no blocks, nothing starts.
     */
    @Override
    public synchronized void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
        if (numExternalTokens < 0) {
            throw new IllegalArgumentException("num_external_tokens must be >= 0, got " + numExternalTokens);
        }
        if (!blockIds.isEmpty() && offeredPrefix.remove(request.requestId()) != null) {
            loads.put(request.requestId(), new AsyncTransfer(request.requestId(), kvCacheManager.beginTransfer(request.requestId())));
            loaded.add(request.requestId());
        }
    }

    /** Consumes the prefix offered for {@code requestId} (upstream: {@code params["do_remote_prefill"] = False}); whether there was one. */
    protected final boolean takeOffer(String requestId) {
        return offeredPrefix.remove(requestId) != null;
    }

    /** Counts the call (contract: exactly once per request); validates the arguments. */
    protected final void countRequestFinished(Request request, List<Integer> blockIds) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
        requestFinishedCalls.merge(request.requestId(), 1, Integer::sum);
    }

    @Override
    public synchronized void updateConnectorOutput(KvConnectorOutput kvConnectorOutput) {
        Objects.requireNonNull(kvConnectorOutput, "kvConnectorOutput");
    }

    /**
     * Worker: the load of {@code requestId} lands in the blocks it was started into.
     *
     * @throws UnknownTransferException if no load of that id is in flight (a duplicate or unknown report; nothing changes)
     */
    protected final synchronized void completeLoadOf(String requestId, String what) {
        AsyncTransfer load = loads.get(Objects.requireNonNull(requestId, "requestId"));
        if (load == null || load.done) {
            throw new UnknownTransferException(name + ": no " + what + " of request " + requestId + " is in flight");
        }
        kvCacheManager.completeWrite(load.target);
        load.done = true;
    }

    /**
     * Worker: the load of {@code requestId} fails and writes nothing; the next {@code get_finished} still reports it in
     * finished_recving ("even if failures occur, the request must still be reported"), with the blocks it was started
     * into as {@code invalid_block_ids} ({@code get_block_ids_with_load_errors}).
     *
     * @throws UnknownTransferException if no load of that id is in flight (a duplicate or unknown report; nothing changes)
     */
    protected final synchronized void failLoadOf(String requestId, String what) {
        AsyncTransfer load = loads.get(Objects.requireNonNull(requestId, "requestId"));
        if (load == null || load.done) {
            throw new UnknownTransferException(name + ": no " + what + " of request " + requestId + " is in flight");
        }
        load.done = true;
        load.failed = true;
    }

    /** What a reported load adds to {@code invalid_block_ids}: its blocks if it failed, else nothing. */
    protected static List<Integer> invalidBlocksOf(AsyncTransfer load) {
        return load.failed ? load.target.blockIds() : List.of();
    }

    /** Completes every transfer in {@code transfers} still in flight; returns how many did. */
    protected final int completeAll(Iterable<AsyncTransfer> transfers) {
        int n = 0;
        for (AsyncTransfer t : transfers) {
            if (!t.done) {
                kvCacheManager.completeWrite(t.target);
                t.done = true;
                n++;
            }
        }
        return n;
    }

    @Override
    public synchronized boolean hasUnreportedLoad(String requestId) {
        return loads.containsKey(requestId);
    }

    /** Whether this child ever started a load of {@code requestId}. */
    protected final synchronized boolean loaded(String requestId) {
        return loaded.contains(requestId);
    }

    /** True while a load of {@code requestId} by this child has started and not landed (nor failed). */
    public synchronized boolean isLoadInFlight(String requestId) {
        AsyncTransfer load = loads.get(requestId);
        return load != null && !load.done;
    }

    /** How often {@code request_finished} ran for {@code requestId} (contract: exactly once). */
    public synchronized int requestFinishedCalls(String requestId) {
        return requestFinishedCalls.getOrDefault(requestId, 0);
    }
}
