package vllmrace.model.connector.multi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;
import vllmrace.model.sched.SchedulerOutput;

/**
 * The job-based offloading connector (#46951, #47046): a finished request's store job outlives its blocks, and only the
 * reuse fence (a block allocated in the step flushes the jobs holding it) keeps the block's next owner from writing it
 * first; blocks handed with 0 external tokens reach the fence only with #47046.
 */
class FencedOffloadingConnectorTest {
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(1, log), 4, log);
    private final Request a = Request.finished("A", 1, 3, 1, RequestStatus.FINISHED_LENGTH_CAPPED);
    private final Request r = new Request("R", 2, 4, 1);
    private static final SchedulerOutput STEP = new SchedulerOutput(1, Map.of(), java.util.Set.of());

    /** A finished with a store job pending over its one block, freed; R got the block. */
    private FencedOffloadingConnector storePendingBlockReused(FixSet fixes) {
        FencedOffloadingConnector o = new FencedOffloadingConnector("OffloadingConnector", kv, fixes);
        kv.allocateSlots("A", 4);
        assertFalse(o.requestFinished(a, kv.getBlockIds("A")).delayFreeBlocks(), "stores never delay the free");
        assertTrue(o.hasPendingStore("A"));
        kv.free("A");
        kv.allocateSlots("R", 4);
        return o;
    }

    @Test
    void withoutTheFixANonChosenAllocationMissesTheFenceAndALoadLandsFirst() {
        FencedOffloadingConnector o = storePendingBlockReused(FixSet.upstreamMain());
        o.updateStateAfterAlloc(r, kv.getBlockIds("R"), 0);
        o.buildConnectorMeta(STEP);
        assertTrue(o.hasPendingStore("A"), "nothing flushed");
        kv.completeWrite(kv.beginTransfer("R")); // NIXL's READ into the block
        assertTrue(o.storeCopyLands("A"));
        assertEquals(List.of(ViolationKind.STORE_READ_OF_FREED_BLOCK), log.all().stream().map(Violation::kind).toList());
    }

    @Test
    void withTheFixTheFenceLandsTheStoreBeforeTheLoad() {
        FencedOffloadingConnector o = storePendingBlockReused(FixSet.of(List.of(Fix.OFFLOAD_FENCE_NON_CHOSEN_BLOCKS)));
        o.updateStateAfterAlloc(r, kv.getBlockIds("R"), 0);
        o.buildConnectorMeta(STEP);
        assertFalse(o.hasPendingStore("A"), "flushed: the worker waited for it");
        kv.completeWrite(kv.beginTransfer("R"));
        assertFalse(o.storeCopyLands("A"), "it landed at the fence's wait");
        assertTrue(log.isEmpty(), log.toString());
        assertTrue(o.isIdle());
    }

    /** Through MultiConnector: build_connector_meta reaches the offloader, whose fence then sees the non-chosen block. */
    @Test
    void multiConnectorForwardsTheMetaBuildToTheFence() {
        FencedOffloadingConnector o = storePendingBlockReused(FixSet.of(List.of(Fix.OFFLOAD_FENCE_NON_CHOSEN_BLOCKS, Fix.NON_CHOSEN_REAL_BLOCKS)));
        MultiConnector multi = new MultiConnector(FixSet.of(List.of(Fix.NON_CHOSEN_REAL_BLOCKS)), List.of(o));
        multi.updateStateAfterAlloc(r, kv.getBlockIds("R"), 0);
        assertTrue(o.hasPendingStore("A"), "recorded, not flushed yet");
        multi.buildConnectorMeta(STEP);
        assertFalse(o.hasPendingStore("A"), "the step's meta build flushed it");
        assertThrows(NullPointerException.class, () -> multi.buildConnectorMeta(null));
    }

    /** A chosen child (tokens > 0) is fenced upstream too; a read of a freed block nobody wrote is harmless. */
    @Test
    void aChosenAllocationIsFencedAndAnUnwrittenFreedBlockIsHarmless() {
        FencedOffloadingConnector o = storePendingBlockReused(FixSet.upstreamMain());
        o.updateStateAfterAlloc(r, kv.getBlockIds("R"), 4);
        o.buildConnectorMeta(STEP);
        assertFalse(o.hasPendingStore("A"));
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void badCallsAreRefusedAndChangeNothing() {
        FencedOffloadingConnector o = storePendingBlockReused(FixSet.upstreamMain());
        String before = o.progressSignature();
        assertThrows(UnknownTransferException.class, () -> o.storeCopyLands("X"), "no job of X");
        assertThrows(NullPointerException.class, () -> o.storeCopyLands(null));
        assertThrows(IllegalArgumentException.class, () -> o.updateStateAfterAlloc(r, kv.getBlockIds("R"), -1));
        assertThrows(IllegalStateException.class, () -> o.requestFinished(a, List.of(0)), "A's job is still pending");
        assertThrows(NullPointerException.class, () -> o.buildConnectorMeta(null));
        assertEquals(before, o.progressSignature());
        assertTrue(o.hasPendingStore("A"));
        assertTrue(log.isEmpty(), log.toString());
        assertEquals(1, o.finishInFlightTransfers());
        assertFalse(o.storeCopyLands("A"));
    }
}
