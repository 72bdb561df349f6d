package vllmrace.model.kv;

/**
 * One KV-cache block. Mirrors {@code vllm/v1/core/kv_cache_utils.py}, {@code KVCacheBlock} ({@code block_id},
 * {@code ref_cnt}); no block hash, no null block, no prefix caching.
 *
 * <p>Two detector-only fields have no upstream counterpart: {@link #generation()} counts how often
 * {@link BlockPool#getNewBlocks} handed the block out, so a stale reference can be told from a reallocated block,
 * and {@link #lastRequestId()} names the request it was last allocated to. All fields are written only by the owning
 * {@link BlockPool} under its lock; they are volatile so single-field reads from other threads are current.
 */
public final class KvCacheBlock {
    private final int blockId;
    private volatile int refCnt;
    private volatile int generation;
    private volatile String lastRequestId;
    private volatile int loadedGeneration;

    KvCacheBlock(int blockId) {
        this.blockId = blockId;
    }

    public int blockId() {
        return blockId;
    }

    public int refCnt() {
        return refCnt;
    }

    /** Detector only: number of times this block was handed out by {@code getNewBlocks}; 0 = never allocated. */
    public int generation() {
        return generation;
    }

    /** Detector only: the request this block was last allocated to, or null if none (or allocated outside a manager). */
    public String lastRequestId() {
        return lastRequestId;
    }

    /**
     * Detector only: the generation at which an async load (a NIC/RDMA write) last filled this block; equal to
     * {@link #generation()} when the current owner's KV has landed.
     */
    public int loadedGeneration() {
        return loadedGeneration;
    }

    void markLoaded() {
        loadedGeneration = generation;
    }

    void allocate(String requestId) {
        generation++;
        refCnt = 1;
        lastRequestId = requestId;
    }

    void incrementRefCnt() {
        refCnt++;
    }

    void decrementRefCnt() {
        refCnt--;
    }

    @Override
    public String toString() {
        return "KvCacheBlock[" + blockId + ", ref_cnt=" + refCnt + ", gen=" + generation + ", last=" + lastRequestId + "]";
    }
}
