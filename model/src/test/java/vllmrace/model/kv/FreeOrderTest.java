package vllmrace.model.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.detect.ViolationLog;

/**
 * {@code block_pool.free_blocks(reversed(blocks))}: a request's blocks go back tail first, so its tail blocks are the
 * first to be taken again (upstream evicts them first: they are the least likely to be a prefix of a later request).
 * The same order for the deferred half ({@link KvCacheManager#freeBlocks}) and for a job's references
 * ({@link KvCacheManager#release}); and the bad-input refusal of {@link KvCacheManager#popBlocksForFree}.
 */
class FreeOrderTest {
    private final ViolationLog log = new ViolationLog();
    private final BlockPool pool = new BlockPool(3, log);
    private final KvCacheManager kv = new KvCacheManager(pool, 4, log);

    private List<Integer> ids(List<KvCacheBlock> blocks) {
        return blocks.stream().map(KvCacheBlock::blockId).toList();
    }

    @Test
    void aDeferredFreeReturnsTheBlocksTailFirst() {
        List<Integer> a = ids(kv.allocateSlots("A", 12).orElseThrow());
        kv.freeBlocks(kv.popBlocksForFree("A"));
        assertEquals(List.of(a.get(2), a.get(1), a.get(0)), ids(kv.allocateSlots("B", 12).orElseThrow()));
        assertEquals(List.of(), log.all());
    }

    @Test
    void aJobsReferencesAreReleasedTailFirst() {
        List<Integer> a = ids(kv.allocateSlots("A", 12).orElseThrow());
        TransferTarget job = kv.beginTransfer("A");
        kv.reference(job);
        kv.free("A"); // the job still holds every block
        assertEquals(0, pool.numFreeBlocks());
        kv.release(job);
        assertEquals(List.of(a.get(2), a.get(1), a.get(0)), ids(kv.allocateSlots("B", 12).orElseThrow()));
    }

    @Test
    void popBlocksForFreeRefusesANullOrEmptyIdChangingNothing() {
        kv.allocateSlots("A", 4).orElseThrow();
        assertEquals("requestId must not be null", assertThrows(NullPointerException.class, () -> kv.popBlocksForFree(null)).getMessage());
        assertEquals("requestId must not be empty", assertThrows(IllegalArgumentException.class, () -> kv.popBlocksForFree("")).getMessage());
        assertEquals(1, kv.numBlocks("A"));
    }

    /** A job may reference only the blocks it snapshotted while they are held: a freed one, even unreallocated, is refused. */
    @Test
    void aJobCannotReferenceABlockFreedSinceItsSnapshot() {
        kv.allocateSlots("A", 4).orElseThrow();
        TransferTarget job = kv.beginTransfer("A");
        kv.free("A"); // free, not reallocated: same generation, ref_cnt 0
        assertThrows(IllegalStateException.class, () -> kv.reference(job));
        assertEquals(3, pool.numFreeBlocks(), "nothing referenced");
    }

    /**
     * STALE_STEP_WRITE_INTO_REUSED_BLOCK names only a block someone holds: A's in-flight step writing a block that was
     * reallocated to B, filled by B's load and freed again corrupts no one (the next owner's allocation overwrites it).
     */
    @Test
    void aStaleStepWriteIntoABlockFreedAgainIsNoFinding() {
        BlockPool one = new BlockPool(1, log);
        KvCacheManager manager = new KvCacheManager(one, 4, log);
        manager.allocateSlots("A", 4).orElseThrow();
        TransferTarget step = manager.beginTransfer("A"); // A's step in flight
        manager.free("A");
        manager.allocateSlots("B", 4).orElseThrow();
        manager.completeWrite(manager.beginTransfer("B")); // B's load lands
        manager.free("B");
        manager.completeDeviceWrite(step);
        assertEquals(List.of(), log.all());
        manager.allocateSlots("C", 4).orElseThrow();
        manager.completeWrite(manager.beginTransfer("C"));
        manager.completeDeviceWrite(step); // now C holds it, filled by its load: that is the finding
        assertEquals(List.of(vllmrace.model.detect.ViolationKind.STALE_STEP_WRITE_INTO_REUSED_BLOCK),
                log.all().stream().map(vllmrace.model.detect.Violation::kind).toList());
    }
}
