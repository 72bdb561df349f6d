package vllmrace.model.kv;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Per-request block bookkeeping for one KV-cache group. Mirrors {@code vllm/v1/core/kv_cache_manager.py},
 * {@code KVCacheManager.allocate_slots} / {@code free} / {@code get_block_ids}, and
 * {@code vllm/v1/core/single_type_kv_cache_manager.py}, {@code SingleTypeKVCacheManager.req_to_blocks},
 * {@code allocate_new_blocks} and {@code free}.
 *
 * <p>{@code req_to_blocks} is keyed ONLY by the request id string (lifecycle §1(b)): two live requests under one id
 * share one block list, and freeing either releases both — a use-after-free for the survivor, which
 * {@link #completeWrite} detects. {@code free} pops with a {@code []} default "in case a request is freed (aborted)
 * before alloc", so freeing an id twice is silent.
 *
 * <p>Simplification: each {@code allocateSlots} call gets {@code ceil(numNewTokens / blockSize)} fresh blocks; the
 * model does not fill a partly used last block (upstream derives that from {@code request.num_computed_tokens}, which
 * lives on the Request object, not under the id).
 *
 * <p>Detectors (SC4, SC5): {@link #beginTransfer}/{@link #completeWrite} flag a write into a block the request no
 * longer owns ({@link ViolationKind#WRITE_INTO_FREED_BLOCK}); {@link #checkNoLeak} flags blocks held by nobody
 * ({@link ViolationKind#BLOCK_LEAK}). Double frees are flagged by the {@link BlockPool}.
 *
 * <p>Thread-safe: every public method is synchronized on the manager; lock order is always manager, then pool.
 */
public final class KvCacheManager {
    private final BlockPool blockPool;
    private final int blockSize;
    private final ViolationLog log;
    private final Map<String, List<KvCacheBlock>> reqToBlocks = new HashMap<>();

    public KvCacheManager(BlockPool blockPool, int blockSize, ViolationLog log) {
        this.blockPool = Objects.requireNonNull(blockPool, "blockPool must not be null");
        if (blockSize <= 0) {
            throw new IllegalArgumentException("blockSize must be > 0, got " + blockSize);
        }
        this.blockSize = blockSize;
        this.log = Objects.requireNonNull(log, "log must not be null");
    }

    /** The log the detectors of this manager write to, shared with the engine it serves. */
    public ViolationLog violations() {
        return log;
    }

    /**
     * {@code KVCacheManager.allocate_slots}: allocates the blocks for {@code numNewTokens} more tokens and appends them
     * to {@code reqToBlocks[requestId]} (created if missing, as upstream's defaultdict).
     *
     * @return the new blocks (empty for 0 tokens), or {@link Optional#empty()} — upstream's {@code None} — when the pool
     *     has too few free blocks; then nothing is allocated and no key is created
     * @throws NullPointerException if {@code requestId} is null; IllegalArgumentException if it is empty or
     *     {@code numNewTokens} is negative (nothing changes)
     */
    public synchronized Optional<List<KvCacheBlock>> allocateSlots(String requestId, int numNewTokens) {
        UpstreamPins.enter(UpstreamPin.KV_CACHE_MANAGER_ALLOCATE_SLOTS);
        requireId(requestId);
        if (numNewTokens < 0) {
            throw new IllegalArgumentException("numNewTokens must be >= 0, got " + numNewTokens);
        }
        int numNewBlocks = (numNewTokens + blockSize - 1) / blockSize;
        List<KvCacheBlock> newBlocks;
        synchronized (blockPool) { // check and take atomically against direct pool users
            if (numNewBlocks > blockPool.numFreeBlocks()) {
                return Optional.empty();
            }
            newBlocks = blockPool.getNewBlocks(numNewBlocks, requestId);
        }
        reqToBlocks.computeIfAbsent(requestId, k -> new ArrayList<>()).addAll(newBlocks);
        return Optional.of(List.copyOf(newBlocks));
    }

    /**
     * {@code KVCacheManager.free}: pops {@code reqToBlocks[requestId]} (default empty, so an unknown or already freed
     * id is a silent no-op) and frees the blocks in reverse order, so tail blocks are reused first.
     */
    public synchronized void free(String requestId) {
        UpstreamPins.enter(UpstreamPin.KV_CACHE_MANAGER_FREE);
        requireId(requestId);
        List<KvCacheBlock> blocks = reqToBlocks.remove(requestId);
        if (blocks == null || blocks.isEmpty()) {
            return;
        }
        List<KvCacheBlock> ordered = new ArrayList<>(blocks);
        Collections.reverse(ordered);
        blockPool.freeBlocks(ordered);
    }

    /**
     * {@code KVCacheManager.pop_blocks_for_free} (#45357): pops {@code reqToBlocks[requestId]} without freeing them,
     * for a free the scheduler defers; empty for an unknown or already freed id.
     */
    public synchronized List<KvCacheBlock> popBlocksForFree(String requestId) {
        requireId(requestId);
        List<KvCacheBlock> blocks = reqToBlocks.remove(requestId);
        return blocks == null ? List.of() : List.copyOf(blocks);
    }

    /** The deferred half of {@link #free}: {@code block_pool.free_blocks(reversed(blocks))}. */
    public synchronized void freeBlocks(List<KvCacheBlock> blocks) {
        List<KvCacheBlock> ordered = new ArrayList<>(Objects.requireNonNull(blocks, "blocks"));
        Collections.reverse(ordered);
        blockPool.freeBlocks(ordered);
    }

    /**
     * Detector: a dispatched step's device write into the snapshotted blocks lands now (an in-flight forward pass writes
     * the request's KV slot). A block reallocated since, whose new owner's KV already came in by an async load, is
     * overwritten with stale data: recorded as {@link ViolationKind#STALE_STEP_WRITE_INTO_REUSED_BLOCK}. A write into a
     * free block, or into a reallocated block whose load has not landed yet (the load overwrites it), harms no one.
     */
    public synchronized void completeDeviceWrite(TransferTarget target) {
        Objects.requireNonNull(target, "target must not be null");
        synchronized (blockPool) {
            for (TransferTarget.Slot slot : target.slots()) {
                KvCacheBlock block = slot.block();
                if (block.refCnt() > 0 && block.generation() != slot.generation() && block.loadedGeneration() == block.generation()) {
                    log.record(ViolationKind.STALE_STEP_WRITE_INTO_REUSED_BLOCK, block.lastRequestId(), "an in-flight step of '"
                            + target.requestId() + "' wrote block " + block.blockId() + " after it was reallocated to '"
                            + block.lastRequestId() + "' and filled by its async load: that request's KV is corrupted");
                }
            }
        }
    }

    /** {@code KVCacheManager.get_block_ids}: the ids listed under {@code requestId}; empty (no key created) if none. */
    public synchronized List<Integer> getBlockIds(String requestId) {
        UpstreamPins.enter(UpstreamPin.KV_CACHE_MANAGER_GET_BLOCK_IDS);
        requireId(requestId);
        return reqToBlocks.getOrDefault(requestId, List.of()).stream().map(KvCacheBlock::blockId).toList();
    }

    /** {@code len(req_to_blocks[requestId])}, without creating the key. */
    public synchronized int numBlocks(String requestId) {
        requireId(requestId);
        return reqToBlocks.getOrDefault(requestId, List.of()).size();
    }

    /** Tokens per block ({@code block_size}). */
    public int blockSize() {
        return blockSize;
    }

    /** Blocks with {@code refCnt > 0} in the pool. */
    public synchronized int numUsedBlocks() {
        return blockPool.numUsedBlocks();
    }

    /** Detector: snapshots the blocks now listed under {@code requestId}, with their generations. */
    public synchronized TransferTarget beginTransfer(String requestId) {
        requireId(requestId);
        List<TransferTarget.Slot> slots = new ArrayList<>();
        synchronized (blockPool) {
            for (KvCacheBlock block : reqToBlocks.getOrDefault(requestId, List.of())) {
                slots.add(new TransferTarget.Slot(block, block.generation()));
            }
        }
        return new TransferTarget(requestId, slots);
    }

    /**
     * Detector: the transfer's write lands. Every snapshotted block must still be allocated ({@code refCnt > 0}), have
     * the same generation, and still be listed under the transfer's request id; each block that is not is recorded as
     * {@link ViolationKind#WRITE_INTO_FREED_BLOCK}, naming who holds it now. Never throws for that.
     */
    public synchronized void completeWrite(TransferTarget target) {
        Objects.requireNonNull(target, "target must not be null");
        String requestId = target.requestId();
        List<KvCacheBlock> listed = reqToBlocks.getOrDefault(requestId, List.of());
        synchronized (blockPool) {
            for (TransferTarget.Slot slot : target.slots()) {
                KvCacheBlock block = slot.block();
                String problem;
                if (block.refCnt() <= 0) {
                    problem = "it is free";
                } else if (block.generation() != slot.generation()) {
                    problem = "it was reallocated (generation " + slot.generation() + " -> " + block.generation() + ")";
                } else if (!listed.contains(block)) {
                    problem = "req_to_blocks['" + requestId + "'] no longer lists it";
                } else {
                    block.markLoaded();
                    continue;
                }
                log.record(ViolationKind.WRITE_INTO_FREED_BLOCK, requestId,
                        "transfer for '" + requestId + "' wrote block " + block.blockId() + " (snapshot generation "
                                + slot.generation() + ") but " + problem + "; now held by " + holders(block));
            }
        }
    }

    /**
     * Detector: an async store job reads the snapshotted blocks now. Each block must still be allocated with the same
     * generation (nobody could have written it since); one that is free or was reallocated is recorded as
     * {@link ViolationKind#STORE_READ_OF_FREED_BLOCK}, naming who holds it now. Never throws for that.
     */
    public synchronized void completeRead(TransferTarget target) {
        completeRead(target, ViolationKind.STORE_READ_OF_FREED_BLOCK, "store job", "the KV stored under its key is not its own");
    }

    /**
     * Detector: a store job of a design that frees the request's blocks at once and fences their reuse (the offloading
     * connector's job-based scheduler) reads the snapshotted blocks now. Reading a freed or reallocated block is harmless
     * while its bytes are still the request's; a block into which a transfer of another owner has written since the
     * snapshot (a load's write landed under a later generation) is recorded as {@link ViolationKind#STORE_READ_OF_FREED_BLOCK}.
     * Never throws for that.
     */
    public synchronized void completeFencedStoreRead(TransferTarget target) {
        Objects.requireNonNull(target, "target must not be null");
        synchronized (blockPool) {
            for (TransferTarget.Slot slot : target.slots()) {
                KvCacheBlock block = slot.block();
                if (block.loadedGeneration() > slot.generation()) {
                    log.record(ViolationKind.STORE_READ_OF_FREED_BLOCK, target.requestId(), "store job for '" + target.requestId()
                            + "' read block " + block.blockId() + " after a load for its next owner wrote it (generation "
                            + slot.generation() + " -> " + block.loadedGeneration() + "; now held by " + holders(block)
                            + "): the KV stored under its key is not its own");
                }
            }
        }
    }

    /**
     * Detector: a remote side's RDMA transfer (a decode side's NIXL READ, a prefill side's push WRITE) reads the
     * snapshotted blocks now; one that is free or was reallocated is recorded as
     * {@link ViolationKind#REMOTE_READ_OF_FREED_BLOCK}. Never throws for that.
     */
    public synchronized void completeRemoteRead(TransferTarget target, String reader) {
        completeRead(target, ViolationKind.REMOTE_READ_OF_FREED_BLOCK, reader, "the remote side got another request's KV as this one's");
    }

    private void completeRead(TransferTarget target, ViolationKind kind, String reader, String consequence) {
        Objects.requireNonNull(target, "target must not be null");
        synchronized (blockPool) {
            for (TransferTarget.Slot slot : target.slots()) {
                KvCacheBlock block = slot.block();
                String problem = block.refCnt() <= 0 ? "it is free"
                        : block.generation() != slot.generation() ? "it was reallocated (generation " + slot.generation() + " -> "
                        + block.generation() + ")" : null;
                if (problem != null) {
                    log.record(kind, target.requestId(), reader + " for '" + target.requestId() + "' read block " + block.blockId()
                            + " but " + problem + "; now held by " + holders(block) + ": " + consequence);
                }
            }
        }
    }

    /**
     * #52372's block reference per store job: {@code pool.touch} the snapshotted blocks, so they stay out of the free
     * queue while the job reads them, whatever happens to the request.
     *
     * @throws IllegalStateException if a snapshotted block was already freed or reallocated (nothing changes)
     */
    public synchronized void reference(TransferTarget target) {
        Objects.requireNonNull(target, "target must not be null");
        List<KvCacheBlock> blocks = new ArrayList<>();
        synchronized (blockPool) {
            for (TransferTarget.Slot slot : target.slots()) {
                if (slot.block().refCnt() <= 0 || slot.block().generation() != slot.generation()) {
                    throw new IllegalStateException("cannot reference block " + slot.block().blockId() + " of '" + target.requestId()
                            + "': it is no longer the block the job snapshotted");
                }
                blocks.add(slot.block());
            }
        }
        blockPool.touch(blocks);
    }

    /** Drops the references {@link #reference} took: {@code pool.free_blocks(reversed(block_ids))}. */
    public synchronized void release(TransferTarget target) {
        Objects.requireNonNull(target, "target must not be null");
        List<KvCacheBlock> blocks = new ArrayList<>(target.slots().stream().map(TransferTarget.Slot::block).toList());
        java.util.Collections.reverse(blocks);
        blockPool.freeBlocks(blocks);
    }

    /**
     * Detector (SC5), at quiescence: every block with {@code refCnt > 0} must be listed under a live request id or be
     * pinned by an outstanding transfer (same block, same generation); each other one is recorded as
     * {@link ViolationKind#BLOCK_LEAK}.
     */
    public synchronized void checkNoLeak(Collection<String> liveRequestIds, Collection<TransferTarget> pinnedTransfers) {
        Set<String> live = Set.copyOf(Objects.requireNonNull(liveRequestIds, "liveRequestIds must not be null"));
        List<TransferTarget> pinned = List.copyOf(Objects.requireNonNull(pinnedTransfers, "pinnedTransfers must not be null"));
        Set<KvCacheBlock> held = new HashSet<>(); // KvCacheBlock has identity equality
        for (String id : live) {
            held.addAll(reqToBlocks.getOrDefault(id, List.of()));
        }
        synchronized (blockPool) {
            for (TransferTarget t : pinned) {
                for (TransferTarget.Slot slot : t.slots()) {
                    if (slot.block().generation() == slot.generation()) {
                        held.add(slot.block());
                    }
                }
            }
            for (KvCacheBlock block : blockPool.allBlocks()) {
                if (block.refCnt() > 0 && !held.contains(block)) {
                    log.record(ViolationKind.BLOCK_LEAK, block.lastRequestId(),
                            "block " + block.blockId() + " (ref_cnt " + block.refCnt() + ", generation "
                                    + block.generation() + ") is held by no live request and no pinned transfer; listed under "
                                    + holders(block));
                }
            }
        }
    }

    /** The ids whose {@code reqToBlocks} list holds {@code block}, or why nobody does. Caller holds both locks. */
    private String holders(KvCacheBlock block) {
        if (block.refCnt() <= 0) {
            return "nobody (ref_cnt 0, in the free queue)";
        }
        List<String> ids = new ArrayList<>();
        for (Map.Entry<String, List<KvCacheBlock>> e : reqToBlocks.entrySet()) {
            if (e.getValue().contains(block)) {
                ids.add("'" + e.getKey() + "'");
            }
        }
        return ids.isEmpty()
                ? "no request id (ref_cnt " + block.refCnt() + ", held only by touch)"
                : "request " + String.join(", ", ids) + " (ref_cnt " + block.refCnt() + ")";
    }

    private static void requireId(String requestId) {
        Objects.requireNonNull(requestId, "requestId must not be null");
        if (requestId.isEmpty()) {
            throw new IllegalArgumentException("requestId must not be empty");
        }
    }
}
