package vllmrace.model.connector.multi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
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

/**
 * The NIXL pull producer (pull_scheduler.py {@code request_finished} on P, pull_worker.py {@code _get_new_notifs}): a
 * finished request's blocks leased and handed to the decode side, released by its READ's notification or by the
 * reaper; a READ after the expiry copies whatever the blocks hold, unless declined (the suite's proposal).
 */
class NixlPullProducerTest {
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(1, log), 4, log);
    private final Request r = Request.finished("R", 1, 3, 1, RequestStatus.FINISHED_LENGTH_CAPPED);

    private NixlPullProducer leased(FixSet fixes) {
        NixlPullProducer nixl = new NixlPullProducer("NixlConnector", kv, fixes, 2);
        kv.allocateSlots("R", 4);
        assertTrue(nixl.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks());
        assertTrue(nixl.isLeased("R"));
        return nixl;
    }

    @Test
    void theReadsNotificationReleasesTheLeaseAtTheNextPoll() {
        NixlPullProducer nixl = leased(FixSet.upstreamMain());
        assertTrue(nixl.remoteRead("R"));
        assertTrue(nixl.hasPendingTransfer("R"));
        assertEquals(Set.of("R"), nixl.getFinished(Set.of("R")).finishedSending());
        assertTrue(nixl.isIdle());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** The lease expires, the block changes hands, the late READ copies it and its notification is only logged. */
    @Test
    void aReleaseNoticeFreesWithoutAReadAndAForgottenHandoffWaitsForTheLease() {
        NixlPullProducer nixl = leased(FixSet.upstreamMain());
        nixl.releaseNotice("R");
        assertFalse(nixl.handedTo("R"));
        assertEquals(Set.of("R"), nixl.getFinished(Set.of("R")).finishedSending(), "released at the next poll");
        assertThrows(UnknownTransferException.class, () -> nixl.releaseNotice("R"), "nothing handed any more");
        assertThrows(UnknownTransferException.class, () -> nixl.forgetHandoff("R"));
        NixlPullProducer other = leased(FixSet.upstreamMain());
        other.forgetHandoff("R");
        assertTrue(other.isLeased("R"), "only the lease's expiry frees it now");
        assertFalse(other.handedTo("R"));
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void aReadAfterTheLeaseCopiesAnotherRequestsBlock() {
        NixlPullProducer nixl = leased(FixSet.upstreamMain());
        assertEquals(Set.of(), nixl.getFinished(Set.of("R")).finishedSending());
        assertEquals(Set.of("R"), nixl.getFinished(Set.of()).finishedSending(), "poll 2: the reaper");
        kv.free("R");
        kv.allocateSlots("R2", 4);
        assertTrue(nixl.remoteRead("R"), "upstream D checks nothing");
        assertEquals(List.of(ViolationKind.REMOTE_READ_OF_FREED_BLOCK), log.all().stream().map(Violation::kind).toList());
        assertTrue(log.all().get(0).detail().contains("R2"), log.toString());
        assertEquals(Set.of(), nixl.getFinished(Set.of()).finishedSending(), "the late notification is only logged");
        assertTrue(nixl.isIdle());
    }

    @Test
    void withTheProposalTheLateReadIsDeclined() {
        NixlPullProducer nixl = leased(FixSet.all());
        nixl.getFinished(Set.of("R"));
        nixl.getFinished(Set.of());
        kv.free("R");
        kv.allocateSlots("R2", 4);
        assertFalse(nixl.remoteRead("R"), "at or after the advertised expiry");
        assertTrue(nixl.isIdle());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** Bidirectional: the decode side holds the blocks; #47021 declines the prefill side's late turn-2 READ. */
    @Test
    void aBidirectionalTurnTwoReadIsDeclinedOnlyWith47021() {
        for (boolean fixed : new boolean[] {false, true}) {
            ViolationLog fresh = new ViolationLog();
            KvCacheManager d = new KvCacheManager(new BlockPool(1, fresh), 4, fresh);
            FixSet fixes = fixed ? FixSet.all() : FixSet.all().without(Fix.TURN2_READ_EXPIRY_CHECK);
            NixlPullProducer nixl = new NixlPullProducer("NixlConnector", d, fixes, 2, true);
            d.allocateSlots("R", 4);
            nixl.requestFinished(r, d.getBlockIds("R"));
            nixl.getFinished(Set.of("R"));
            nixl.getFinished(Set.of());
            d.free("R");
            d.allocateSlots("R2", 4);
            assertEquals(!fixed, nixl.remoteRead("R"));
            assertEquals(fixed ? List.of() : List.of(ViolationKind.REMOTE_READ_OF_FREED_BLOCK), fresh.all().stream().map(Violation::kind).toList());
        }
    }

    @Test
    void anAbortedRequestHandsNothing() {
        NixlPullProducer nixl = new NixlPullProducer("NixlConnector", kv, FixSet.all(), 2);
        kv.allocateSlots("A", 4);
        assertFalse(nixl.requestFinished(Request.finished("A", 1, 3, 1, RequestStatus.FINISHED_ABORTED), kv.getBlockIds("A")).delayFreeBlocks());
        assertThrows(UnknownTransferException.class, () -> nixl.remoteRead("A"));
        assertTrue(nixl.isIdle());
    }

    @Test
    void badReadsAreRefusedAndChangeNothing() {
        NixlPullProducer nixl = leased(FixSet.upstreamMain());
        String before = nixl.progressSignature();
        assertThrows(UnknownTransferException.class, () -> nixl.remoteRead("X"), "nothing of X was handed");
        assertThrows(NullPointerException.class, () -> nixl.remoteRead(null));
        assertThrows(NullPointerException.class, () -> nixl.heartbeat((String) null));
        assertThrows(IllegalArgumentException.class, () -> new NixlPullProducer("P", kv, FixSet.all(), 0));
        assertEquals(before, nixl.progressSignature());
        assertTrue(nixl.remoteRead("R"));
        assertThrows(UnknownTransferException.class, () -> nixl.remoteRead("R"), "read already");
        assertTrue(log.isEmpty(), log.toString());
    }
}
