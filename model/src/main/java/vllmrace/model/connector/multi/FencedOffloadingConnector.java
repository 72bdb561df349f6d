package vllmrace.model.connector.multi;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.kv.TransferTarget;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.SchedulerOutput;

/**
 * The offloading connector in its job-based design: {@code offloading/scheduler.py} {@code OffloadingConnectorScheduler}
 * (a stored copy whose commit is unknown, the one #47046's diff applies to) and {@code offloading/worker.py@0078e9d2}.
 * {@code request_finished} registers the blocks of the request's pending store jobs in {@code _block_id_to_pending_jobs}
 * and returns {@code (False, None)}: the blocks are freed at once ("Stores never emit finished_sending"), and their safe
 * reuse rests on a fence: {@code build_connector_meta} flushes every job holding a block allocated in the current step
 * ({@code _current_batch_allocated_block_ids}), and the worker waits for those jobs in {@code handle_preemptions}, before
 * the step's forward and so before any async load ({@code start_load_kv}, in {@code post_forward}) writes the blocks.
 * {@code update_state_after_alloc} records the allocated blocks only after {@code if num_external_tokens == 0: return}, so
 * a child MultiConnector did not choose (handed the real blocks since #46865, with 0 tokens) records none; with
 * {@link Fix#OFFLOAD_FENCE_NON_CHOSEN_BLOCKS} (#47046, proposed) it records them.
 *
 * <p>Model simplifications: a finished request's last store job is created at {@code request_finished} (upstream: by the
 * step's {@code build_connector_meta}, from the request's computed blocks, registered at {@code request_finished}); loads
 * and the stores of running requests are not modelled. A job's GPU-to-CPU copy lands as a worker event
 * ({@link #storeCopyLands}), or at the fence's wait; what it reads is judged by
 * {@link KvCacheManager#completeFencedStoreRead}.
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public final class FencedOffloadingConnector extends NoLoadChild {
    private final FixSet fixes;
    /** Store jobs submitted and not landed, by request id, in creation order (the blocks each snapshotted). */
    private final Map<String, TransferTarget> pendingJobs = new LinkedHashMap<>();
    /** {@code _block_id_to_pending_jobs}: populated for finished requests only. */
    private final Map<Integer, Set<String>> blockIdToPendingJobs = new HashMap<>();
    /** {@code _current_batch_allocated_block_ids}: blocks allocated in the current engine step, cleared by the meta build. */
    private final Set<Integer> currentBatchAllocatedBlockIds = new LinkedHashSet<>();
    /** Jobs whose copy already landed (at the fence's wait, or as its own event). */
    private final Set<String> landed = new HashSet<>();

    public FencedOffloadingConnector(String name, KvCacheManager kvCacheManager, FixSet fixes) {
        super(name, kvCacheManager);
        this.fixes = Objects.requireNonNull(fixes, "fixes");
    }

    /** Records the allocated blocks for the reuse fence, unless given 0 external tokens (upstream) and not #47046. */
    @Override
    public synchronized void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        super.updateStateAfterAlloc(request, blockIds, numExternalTokens);
        if (numExternalTokens == 0 && !fixes.isOn(Fix.OFFLOAD_FENCE_NON_CHOSEN_BLOCKS)) {
            return; // if num_external_tokens == 0: return
        }
        currentBatchAllocatedBlockIds.addAll(blockIds);
    }

    /**
     * {@code request_finished}: a request with blocks gets its last store job, whose blocks are registered for the fence;
     * returns {@code (False, None)} either way: the blocks are freed now.
     *
     * @throws IllegalStateException if a store job of that id is still pending (nothing changes)
     */
    @Override
    public synchronized RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
        String id = request.requestId();
        if (pendingJobs.containsKey(id)) {
            throw new IllegalStateException(name() + ": a store job of " + id + " is still pending");
        }
        if (!blockIds.isEmpty()) {
            pendingJobs.put(id, kvCacheManager.beginTransfer(id));
            landed.remove(id);
            for (int blockId : blockIds) {
                blockIdToPendingJobs.computeIfAbsent(blockId, b -> new LinkedHashSet<>()).add(id);
            }
        }
        return RequestFinishedResult.FREE_NOW;
    }

    /**
     * {@code build_connector_meta}: "Flush jobs that contain re-allocated blocks": each job holding a block allocated in
     * this step is flushed, and the worker waits for it before the forward (its copy lands now); then the step's set is
     * cleared.
     */
    @Override
    public synchronized void buildConnectorMeta(SchedulerOutput schedulerOutput) {
        Objects.requireNonNull(schedulerOutput, "schedulerOutput");
        Set<String> toFlush = new LinkedHashSet<>();
        for (int blockId : currentBatchAllocatedBlockIds) {
            toFlush.addAll(blockIdToPendingJobs.getOrDefault(blockId, Set.of()));
        }
        toFlush.forEach(this::land);
        currentBatchAllocatedBlockIds.clear();
    }

    /**
     * The worker: the GPU-to-CPU copy of {@code requestId}'s store job lands (it reads the blocks as they are now).
     * Returns false if it landed already (the fence's wait flushed it).
     *
     * @throws UnknownTransferException if no store job of that id was ever submitted (nothing changes)
     */
    public synchronized boolean storeCopyLands(String requestId) {
        Objects.requireNonNull(requestId, "requestId");
        if (pendingJobs.containsKey(requestId)) {
            land(requestId);
            return true;
        }
        if (landed.contains(requestId)) {
            return false;
        }
        throw new UnknownTransferException(name() + ": no store job of request " + requestId + " was submitted");
    }

    private void land(String requestId) {
        TransferTarget target = pendingJobs.remove(requestId);
        kvCacheManager.completeFencedStoreRead(target);
        blockIdToPendingJobs.values().forEach(jobs -> jobs.remove(requestId));
        blockIdToPendingJobs.values().removeIf(Set::isEmpty);
        landed.add(requestId);
    }

    /** Stores never emit finished_sending; nothing is loaded. */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        Objects.requireNonNull(finishedReqIds, "finishedReqIds");
        return new KvConnectorOutput(Set.of(), Set.of(), Set.of());
    }

    /** Whether a store job of {@code requestId} is submitted and its copy has not landed. */
    public synchronized boolean hasPendingStore(String requestId) {
        return pendingJobs.containsKey(requestId);
    }

    /** The environment: every pending job's copy lands. Returns how many did. */
    @Override
    public synchronized int finishInFlightTransfers() {
        List<String> ids = List.copyOf(pendingJobs.keySet());
        ids.forEach(this::land);
        return ids.size();
    }

    @Override
    public synchronized boolean isIdle() {
        return pendingJobs.isEmpty();
    }

    @Override
    public synchronized String progressSignature() {
        return name() + " store jobs " + pendingJobs.keySet();
    }

    /** The scheduler waits for none of its jobs: they hold no request. */
    @Override
    public synchronized boolean hasPendingTransfer(String requestId) {
        return false;
    }

    /** The jobs' blocks are freed: they pin nothing. */
    @Override
    public synchronized List<TransferTarget> inFlightLoadTargets() {
        return List.of();
    }
}
