package vllmrace.model.kv;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * The pool of KV-cache blocks. Mirrors {@code vllm/v1/core/block_pool.py}, {@code BlockPool}:
 * {@code get_new_blocks}, {@code free_blocks}, {@code touch}, {@code get_num_free_blocks}, with
 * {@code FreeKVCacheBlockQueue} as a FIFO deque (pop from the front, append at the back).
 * Not modelled: the null block, block hashes and prefix-cache eviction. Known difference: at the pinned commit
 * {@code free_blocks} puts blocks that carry no hash at the FRONT of the queue ({@code prepend_n}), so a block freed
 * now is the next one handed out; here every freed block goes to the back. The first wave's verdicts do not depend on
 * which free block is reused (each of their pools holds only the blocks the scenario needs).
 *
 * <p>Upstream {@code free_blocks} has no underflow check (lifecycle §1(b)): freeing a block whose {@code ref_cnt} is
 * already 0 drives it to -1, and the next {@code get_new_blocks} that pops it trips {@code assert ref_cnt == 0}.
 * This model instead DETECTS it (SC4): it records {@link ViolationKind#BLOCK_DOUBLE_FREE} and
 * {@link ViolationKind#BLOCK_REFCOUNT_UNDERFLOW}, and leaves {@code refCnt} at 0 and the free queue untouched, so the
 * pool stays consistent and later detectors still see true state.
 *
 * <p>Thread-safe: every public method is synchronized on the pool.
 */
public final class BlockPool {
    private final KvCacheBlock[] blocks;
    private final ArrayDeque<KvCacheBlock> freeBlockQueue = new ArrayDeque<>();
    private final ViolationLog log;

    public BlockPool(int numGpuBlocks, ViolationLog log) {
        if (numGpuBlocks < 1) { // upstream: assert num_gpu_blocks > 0
            throw new IllegalArgumentException("numGpuBlocks must be >= 1, got " + numGpuBlocks);
        }
        this.log = Objects.requireNonNull(log, "log must not be null");
        this.blocks = new KvCacheBlock[numGpuBlocks];
        for (int i = 0; i < numGpuBlocks; i++) {
            blocks[i] = new KvCacheBlock(i);
            freeBlockQueue.addLast(blocks[i]);
        }
    }

    /**
     * {@code BlockPool.get_new_blocks}: pops {@code numBlocks} blocks from the front of the free queue, each with
     * {@code refCnt} 0, and sets {@code refCnt} to 1.
     *
     * @throws IllegalArgumentException if {@code numBlocks} is negative (nothing changes)
     * @throws NotEnoughFreeBlocksException if fewer than {@code numBlocks} are free (nothing changes)
     */
    public synchronized List<KvCacheBlock> getNewBlocks(int numBlocks) {
        return getNewBlocks(numBlocks, null);
    }

    /** As {@link #getNewBlocks(int)}, recording {@code requestId} as the blocks' owner for the detectors. */
    synchronized List<KvCacheBlock> getNewBlocks(int numBlocks, String requestId) {
        UpstreamPins.enter(UpstreamPin.BLOCK_POOL_GET_NEW_BLOCKS);
        if (numBlocks < 0) {
            throw new IllegalArgumentException("numBlocks must be >= 0, got " + numBlocks);
        }
        if (numBlocks > freeBlockQueue.size()) {
            throw new NotEnoughFreeBlocksException(numBlocks, freeBlockQueue.size());
        }
        List<KvCacheBlock> out = new ArrayList<>(numBlocks);
        for (int i = 0; i < numBlocks; i++) {
            KvCacheBlock block = freeBlockQueue.pollFirst();
            if (block.refCnt() != 0) {
                // upstream: assert block.ref_cnt == 0. Unreachable here: freeBlocks/touch keep the queue consistent.
                throw new IllegalStateException("free queue holds " + block + " with ref_cnt != 0");
            }
            block.allocate(requestId);
            out.add(block);
        }
        return out;
    }

    /**
     * {@code BlockPool.free_blocks}: decrements each block's {@code refCnt} in the given order and appends the blocks
     * that reach 0 to the back of the free queue. A block already at 0 is recorded as a double free plus underflow and
     * left as it is (see the class comment). Never throws for that.
     *
     * @throws IllegalArgumentException if a block does not belong to this pool (nothing changes)
     */
    public synchronized void freeBlocks(List<KvCacheBlock> orderedBlocks) {
        UpstreamPins.enter(UpstreamPin.BLOCK_POOL_FREE_BLOCKS);
        requireOwn(orderedBlocks);
        for (KvCacheBlock block : orderedBlocks) {
            if (block.refCnt() <= 0) {
                String detail = "free_blocks on block " + block.blockId() + " (gen " + block.generation()
                        + ") whose ref_cnt is already " + block.refCnt();
                log.record(ViolationKind.BLOCK_DOUBLE_FREE, block.lastRequestId(), detail);
                log.record(ViolationKind.BLOCK_REFCOUNT_UNDERFLOW, block.lastRequestId(),
                        detail + "; upstream ref_cnt would become " + (block.refCnt() - 1) + " (model keeps 0)");
                continue;
            }
            block.decrementRefCnt();
            if (block.refCnt() == 0) {
                freeBlockQueue.addLast(block);
            }
        }
    }

    /**
     * {@code BlockPool.touch}: increments each block's {@code refCnt}; a block at 0 is first removed from the free
     * queue. Upstream uses it for prefix-cache hits; connectors use it to pin blocks during a transfer.
     *
     * @throws IllegalArgumentException if a block does not belong to this pool (nothing changes)
     */
    public synchronized void touch(List<KvCacheBlock> touchedBlocks) {
        UpstreamPins.enter(UpstreamPin.BLOCK_POOL_TOUCH);
        requireOwn(touchedBlocks);
        for (KvCacheBlock block : touchedBlocks) {
            if (block.refCnt() == 0) {
                freeBlockQueue.remove(block);
            }
            block.incrementRefCnt();
        }
    }

    /** {@code BlockPool.get_num_free_blocks}. */
    public synchronized int numFreeBlocks() {
        return freeBlockQueue.size();
    }

    /** Blocks with {@code refCnt > 0}. */
    public synchronized int numUsedBlocks() {
        return blocks.length - freeBlockQueue.size();
    }

    /** Every block, by id; callers must hold the pool lock to read a consistent picture. */
    List<KvCacheBlock> allBlocks() {
        return List.of(blocks);
    }

    private void requireOwn(List<KvCacheBlock> list) {
        Objects.requireNonNull(list, "blocks must not be null");
        for (KvCacheBlock block : list) {
            if (block == null) {
                throw new IllegalArgumentException("blocks must not contain null");
            }
            int id = block.blockId();
            if (id < 0 || id >= blocks.length || blocks[id] != block) {
                throw new IllegalArgumentException("block " + id + " does not belong to this pool");
            }
        }
    }
}
