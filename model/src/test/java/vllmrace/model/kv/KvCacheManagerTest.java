package vllmrace.model.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;

class KvCacheManagerTest {
    private static final int BLOCK_SIZE = 16;

    private final ViolationLog log = new ViolationLog();
    private final BlockPool pool = new BlockPool(8, log);
    private final KvCacheManager kv = new KvCacheManager(pool, BLOCK_SIZE, log);

    private List<Violation> violations(ViolationKind kind) {
        return log.all().stream().filter(v -> v.kind() == kind).toList();
    }

    @Test
    void allocateAndFreeRoundTrip() {
        List<KvCacheBlock> first = kv.allocateSlots("a", 17).orElseThrow(); // ceil(17/16) = 2 blocks
        List<KvCacheBlock> more = kv.allocateSlots("a", 16).orElseThrow();
        assertEquals(2, first.size());
        assertEquals(1, more.size());
        assertEquals(List.of(0, 1, 2), kv.getBlockIds("a"));
        assertEquals(3, kv.numBlocks("a"));
        assertEquals(3, kv.numUsedBlocks());
        first.forEach(b -> assertEquals("a", b.lastRequestId()));

        kv.free("a");
        assertEquals(0, kv.numBlocks("a"));
        assertEquals(0, kv.numUsedBlocks());
        assertEquals(8, pool.numFreeBlocks());
        // freed in reverse: after the 5 never-used blocks, the tail block 2 is reused before 1 and 0
        assertEquals(List.of(3, 4, 5, 6, 7, 2, 1, 0), pool.getNewBlocks(8).stream().map(KvCacheBlock::blockId).toList());
        assertTrue(log.isEmpty(), log::toString);
    }

    @Test
    void allocationFailsWholeWhenPoolIsShort() {
        kv.allocateSlots("a", 6 * BLOCK_SIZE).orElseThrow();
        assertTrue(kv.allocateSlots("b", 3 * BLOCK_SIZE).isEmpty(), "upstream returns None");
        assertEquals(2, pool.numFreeBlocks(), "no partial allocation");
        assertEquals(0, kv.numBlocks("b"));
        assertTrue(kv.allocateSlots("b", 2 * BLOCK_SIZE).isPresent());
        assertEquals(List.of(), kv.allocateSlots("b", 0).orElseThrow(), "0 tokens: no new blocks, not a failure");
        assertTrue(kv.allocateSlots("c", 1).isEmpty(), "the pool is empty now");
        assertEquals(0, kv.numBlocks("c"));
    }

    @Test
    void freeingAnIdTwiceIsSilentButFreeingTheSameBlocksTwiceIsAViolation() {
        List<KvCacheBlock> blocks = kv.allocateSlots("a", 2 * BLOCK_SIZE).orElseThrow();
        kv.free("a");
        kv.free("a"); // pops the [] default, as for a request aborted before alloc
        kv.free("never-allocated");
        assertTrue(log.isEmpty(), "free by id twice is upstream-legal: " + log);
        assertEquals(8, pool.numFreeBlocks());

        pool.freeBlocks(blocks); // the same block list a second time
        assertEquals(2, violations(ViolationKind.BLOCK_DOUBLE_FREE).size());
        assertEquals("a", violations(ViolationKind.BLOCK_DOUBLE_FREE).get(0).requestId());
        assertTrue(log.has(ViolationKind.BLOCK_REFCOUNT_UNDERFLOW));
        assertEquals(8, pool.numFreeBlocks(), "pool still consistent");
        assertTrue(kv.allocateSlots("b", 8 * BLOCK_SIZE).isPresent());
    }

    /**
     * Lifecycle §1(b): req_to_blocks is keyed by the id string only, so two live requests under one id share one list,
     * and freeing either one releases both requests' blocks.
     */
    @Test
    void twoRequestsUnderOneIdShareOneListAndFreeingEitherReleasesBoth() {
        kv.allocateSlots("x", BLOCK_SIZE).orElseThrow();            // request #1 with id "x"
        TransferTarget firstLoad = kv.beginTransfer("x");
        kv.allocateSlots("x", BLOCK_SIZE).orElseThrow();            // request #2, same id: appended to the same list
        assertEquals(List.of(0, 1), kv.getBlockIds("x"));

        kv.free("x");                                               // request #2 is aborted
        assertEquals(0, kv.numUsedBlocks(), "request #1's block went too");
        kv.free("x");                                               // request #1 finishes: pops [], silent
        assertTrue(log.isEmpty(), log::toString);

        kv.completeWrite(firstLoad);                                // request #1's load lands: use-after-free
        assertEquals(1, violations(ViolationKind.WRITE_INTO_FREED_BLOCK).size());
    }

    @Test
    void writeIntoFreedBlockIsDetected() {
        kv.allocateSlots("a", 2 * BLOCK_SIZE).orElseThrow();
        TransferTarget load = kv.beginTransfer("a");
        assertEquals(List.of(0, 1), load.blockIds());
        kv.free("a");

        kv.completeWrite(load);
        List<Violation> found = violations(ViolationKind.WRITE_INTO_FREED_BLOCK);
        assertEquals(2, found.size());
        assertEquals("a", found.get(0).requestId());
        assertTrue(found.get(0).detail().contains("it is free"), found.get(0).detail());
    }

    @Test
    void writeIntoReallocatedBlockIsDetectedByGeneration() {
        BlockPool small = new BlockPool(1, log);
        KvCacheManager km = new KvCacheManager(small, BLOCK_SIZE, log);
        km.allocateSlots("a", BLOCK_SIZE).orElseThrow();
        TransferTarget pull = km.beginTransfer("a");
        km.free("a");
        KvCacheBlock reused = km.allocateSlots("b", BLOCK_SIZE).orElseThrow().get(0);
        assertEquals(0, reused.blockId());
        assertEquals(2, reused.generation());

        km.completeWrite(pull);
        List<Violation> found = violations(ViolationKind.WRITE_INTO_FREED_BLOCK);
        assertEquals(1, found.size());
        assertTrue(found.get(0).detail().contains("reallocated (generation 1 -> 2)"), found.get(0).detail());
        assertTrue(found.get(0).detail().contains("'b'"), "names the new holder: " + found.get(0).detail());
    }

    @Test
    void writeIntoBlockRelistedUnderSameIdButNewGenerationIsDetected() {
        BlockPool small = new BlockPool(1, log);
        KvCacheManager km = new KvCacheManager(small, BLOCK_SIZE, log);
        km.allocateSlots("x", BLOCK_SIZE).orElseThrow();
        TransferTarget pull = km.beginTransfer("x");
        km.free("x");
        km.allocateSlots("x", BLOCK_SIZE).orElseThrow(); // a new request reusing id "x" gets the same block back
        km.completeWrite(pull);
        assertEquals(1, violations(ViolationKind.WRITE_INTO_FREED_BLOCK).size());
    }

    @Test
    void cleanWriteIsNotFlagged() {
        kv.allocateSlots("a", 3 * BLOCK_SIZE).orElseThrow();
        TransferTarget load = kv.beginTransfer("a");
        kv.allocateSlots("a", BLOCK_SIZE).orElseThrow(); // growing the request does not invalidate the transfer
        kv.completeWrite(load);
        assertEquals(3, load.slots().size());
        assertTrue(log.isEmpty(), log::toString);
    }

    @Test
    void leakIsDetectedAndPinnedTransfersAreNotLeaks() {
        kv.allocateSlots("live", BLOCK_SIZE).orElseThrow();
        kv.allocateSlots("gone", 2 * BLOCK_SIZE).orElseThrow(); // finished, but its blocks were never freed
        kv.allocateSlots("sending", BLOCK_SIZE).orElseThrow();
        TransferTarget save = kv.beginTransfer("sending");
        pool.touch(save.blocks());                              // connector pins the blocks of an async save
        kv.free("sending");

        kv.checkNoLeak(Set.of("live"), List.of(save));
        List<Violation> leaks = violations(ViolationKind.BLOCK_LEAK);
        assertEquals(2, leaks.size(), log::toString);
        assertTrue(leaks.stream().allMatch(v -> v.requestId().equals("gone")), log::toString);

        ViolationLog clean = new ViolationLog(); // a clean system reports nothing
        KvCacheManager km = new KvCacheManager(new BlockPool(4, clean), BLOCK_SIZE, clean);
        km.allocateSlots("live", BLOCK_SIZE).orElseThrow();
        km.checkNoLeak(Set.of("live"), List.of());
        assertTrue(clean.isEmpty(), clean::toString);
    }

    @Test
    void touchedBlockWithoutItsTransferIsALeak() {
        kv.allocateSlots("sending", BLOCK_SIZE).orElseThrow();
        pool.touch(kv.beginTransfer("sending").blocks());
        kv.free("sending");
        kv.checkNoLeak(List.of(), List.of()); // the pinning transfer was dropped without releasing its touch
        List<Violation> leaks = violations(ViolationKind.BLOCK_LEAK);
        assertEquals(1, leaks.size());
        assertTrue(leaks.get(0).detail().contains("held only by touch"), leaks.get(0).detail());
    }

    @Test
    void badInputsThrowAndLeaveStateUnchanged() {
        kv.allocateSlots("a", BLOCK_SIZE).orElseThrow();

        assertEquals("requestId must not be null",
                assertThrows(NullPointerException.class, () -> kv.allocateSlots(null, 1)).getMessage());
        assertEquals("requestId must not be empty",
                assertThrows(IllegalArgumentException.class, () -> kv.allocateSlots("", 1)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> kv.allocateSlots("a", -1))
                .getMessage().contains("numNewTokens"));
        assertThrows(NullPointerException.class, () -> kv.free(null));
        assertThrows(IllegalArgumentException.class, () -> kv.free(""));
        assertThrows(IllegalArgumentException.class, () -> kv.getBlockIds(""));
        assertThrows(IllegalArgumentException.class, () -> kv.numBlocks(""));
        assertThrows(IllegalArgumentException.class, () -> kv.beginTransfer(""));
        assertThrows(NullPointerException.class, () -> kv.completeWrite(null));
        assertThrows(NullPointerException.class, () -> kv.checkNoLeak(null, List.of()));
        assertThrows(IllegalArgumentException.class, () -> new KvCacheManager(pool, 0, log));

        assertEquals(List.of(0), kv.getBlockIds("a"));
        assertEquals(1, kv.numUsedBlocks());
        assertEquals(7, pool.numFreeBlocks());
        assertFalse(log.has(ViolationKind.BLOCK_LEAK));
        assertTrue(log.isEmpty(), log::toString);
    }

    /** A write into a block back in the free queue names nobody as its holder (ref_cnt 0), not an id-less toucher. */
    @Test
    void aWriteIntoAFreedBlockSaysNobodyHoldsIt() {
        ViolationLog log = new ViolationLog();
        KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
        kv.allocateSlots("R", 4);
        var target = kv.beginTransfer("R");
        kv.free("R");
        kv.completeWrite(target);
        List<Violation> all = log.all();
        assertEquals(1, all.size(), all::toString);
        assertTrue(all.get(0).detail().endsWith("now held by nobody (ref_cnt 0, in the free queue)"), all.get(0).detail());
    }
}
