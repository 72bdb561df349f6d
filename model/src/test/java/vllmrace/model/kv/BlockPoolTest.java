package vllmrace.model.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;

class BlockPoolTest {
    private final ViolationLog log = new ViolationLog();
    private final BlockPool pool = new BlockPool(4, log);

    @Test
    void getNewBlocksPopsFifoAndBumpsGeneration() {
        List<KvCacheBlock> got = pool.getNewBlocks(2);
        assertEquals(List.of(0, 1), got.stream().map(KvCacheBlock::blockId).toList());
        assertEquals(1, got.get(0).refCnt());
        assertEquals(1, got.get(0).generation());
        assertEquals(2, pool.numFreeBlocks());
        assertEquals(2, pool.numUsedBlocks());

        pool.freeBlocks(got);
        assertEquals(4, pool.numFreeBlocks());
        // freed blocks went to the back: the never-used blocks 2 and 3 come out first
        assertEquals(List.of(2, 3, 0), pool.getNewBlocks(3).stream().map(KvCacheBlock::blockId).toList());
        assertTrue(log.isEmpty(), log::toString);
    }

    @Test
    void notEnoughFreeBlocksThrowsWithoutPartialAllocation() {
        NotEnoughFreeBlocksException e = assertThrows(NotEnoughFreeBlocksException.class, () -> pool.getNewBlocks(5));
        assertEquals(5, e.requested());
        assertEquals(4, e.free());
        assertEquals(4, pool.numFreeBlocks());
        assertEquals(0, pool.getNewBlocks(0).size());
    }

    @Test
    void negativeBlockCountIsRejectedWithoutStateChange() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> pool.getNewBlocks(-1));
        assertTrue(e.getMessage().contains("numBlocks"), e.getMessage());
        assertEquals(4, pool.numFreeBlocks());
        assertThrows(IllegalArgumentException.class, () -> new BlockPool(-1, log));
        assertThrows(IllegalArgumentException.class, () -> new BlockPool(0, log), "upstream asserts num_gpu_blocks > 0");
        BlockPool one = new BlockPool(1, log);
        one.freeBlocks(one.getNewBlocks(1)); // block 0 belongs to the pool
        List<KvCacheBlock> foreign = new BlockPool(2, log).getNewBlocks(2);
        assertThrows(IllegalArgumentException.class, () -> one.freeBlocks(List.of(foreign.get(1))), "id 1 is past this pool");
        assertThrows(IllegalArgumentException.class, () -> one.freeBlocks(List.of(foreign.get(0))), "same id, another pool's block");
        assertEquals(1, one.numFreeBlocks());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void doubleFreeIsRecordedAndPoolStaysConsistent() {
        List<KvCacheBlock> got = pool.getNewBlocks(2);
        pool.freeBlocks(got);
        pool.freeBlocks(got); // upstream: ref_cnt -> -1, no check

        assertEquals(2, log.all().stream().filter(v -> v.kind() == ViolationKind.BLOCK_DOUBLE_FREE).count());
        assertTrue(log.has(ViolationKind.BLOCK_REFCOUNT_UNDERFLOW));
        assertEquals(0, got.get(0).refCnt());
        assertEquals(4, pool.numFreeBlocks(), "double free must not enqueue a block twice");
        assertEquals(4, pool.getNewBlocks(4).size(), "every block is still allocatable exactly once");
        assertEquals(0, pool.numFreeBlocks());
    }

    @Test
    void touchPinsAFreeBlockOutOfTheQueue() {
        List<KvCacheBlock> got = pool.getNewBlocks(1);
        pool.touch(got);
        assertEquals(2, got.get(0).refCnt());
        pool.freeBlocks(got);
        assertEquals(3, pool.numFreeBlocks(), "still pinned by the touch");
        pool.freeBlocks(got);
        assertEquals(4, pool.numFreeBlocks());

        pool.touch(got); // a free block: removed from the queue
        assertEquals(3, pool.numFreeBlocks());
        assertEquals(1, got.get(0).refCnt());
        assertTrue(log.isEmpty(), log::toString);
    }

    @Test
    void foreignBlocksAreRejectedWithoutStateChange() {
        KvCacheBlock foreign = new BlockPool(4, log).getNewBlocks(1).get(0);
        List<KvCacheBlock> mine = pool.getNewBlocks(1);
        List<KvCacheBlock> mixed = List.of(mine.get(0), foreign);
        assertThrows(IllegalArgumentException.class, () -> pool.freeBlocks(mixed));
        assertThrows(IllegalArgumentException.class, () -> pool.touch(mixed));
        assertThrows(NullPointerException.class, () -> pool.freeBlocks(null));
        assertEquals(1, mine.get(0).refCnt());
        assertEquals(3, pool.numFreeBlocks());
        assertTrue(log.isEmpty(), log::toString);
    }
}
