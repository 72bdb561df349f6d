package vllmrace.model.connector.multi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;

/**
 * The NIXL decode worker's per-handle pulls (nixl/base_worker.py {@code _pop_done_transfers},
 * {@code _handle_failed_transfer}, {@code get_finished}): one READ handle per remote TP rank, a pull done when none is in
 * progress, and the two merged fixes for a handle that fails beside a sibling still in progress: #54518 (the repeat
 * report dropped, not asserted) and #56104 (the failure reported once every handle stopped).
 */
class NixlHandlesTest {
    private static final FixSet BEFORE_BOTH = FixSet.all().without(Fix.FAILED_RECV_REPORTED_ONCE).without(Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP);
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
    private final Request r = new Request("R", 1, 4, 1);

    /** R's pull started over {@code ranks} handles into one block. */
    private NixlDecodeConnector pulling(FixSet fixes, int ranks) {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, fixes);
        nixl.remotePrefill("R", 4, ranks);
        nixl.getNumNewMatchedTokens(r, 0);
        kv.allocateSlots("R", 4);
        nixl.updateStateAfterAlloc(r, kv.getBlockIds("R"), 4);
        assertTrue(nixl.isPullInFlight("R"));
        return nixl;
    }

    @Test
    void aPullIsReportedOnceEveryHandleIsDone() {
        NixlDecodeConnector nixl = pulling(FixSet.upstreamMain(), 2);
        nixl.completeHandle("R", 1);
        assertTrue(nixl.isPullInFlight("R"), "handle 0 still in progress");
        assertEquals(Set.of(), nixl.getFinished(Set.of()).finishedRecving());
        nixl.completeHandle("R", 0);
        assertFalse(nixl.isPullInFlight("R"));
        assertEquals(new KvConnectorOutput(Set.of(), Set.of("R"), Set.of()), nixl.getFinished(Set.of()));
        assertTrue(nixl.isIdle());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** Before #56104: the failure is reported in the poll that sees it, while the sibling still writes the blocks. */
    @Test
    void beforeTheFixesAFailedHandleIsReportedBesideASiblingStillInProgress() {
        NixlDecodeConnector nixl = pulling(BEFORE_BOTH, 2);
        List<Integer> blocks = kv.getBlockIds("R");
        nixl.failHandle("R", 0);
        assertEquals(new KvConnectorOutput(Set.of(), Set.of("R"), Set.copyOf(blocks)), nixl.getFinished(Set.of()));
        assertTrue(nixl.isPullInFlight("R"), "handle 1 still writes");
        assertTrue(nixl.hasPendingTransfer("R"));
        nixl.failHandle("R", 1);
        assertEquals(new KvConnectorOutput(Set.of(), Set.of(), Set.of()), nixl.getFinished(Set.of()), "the worker died");
        assertEquals(List.of(ViolationKind.ENGINE_ASSERT), kinds());
        assertTrue(log.all().get(0).detail().contains("assert meta is not None"), log.toString());
    }

    /** Before the fixes each failed handle queues the id: with a third handle still running, the second failure asserts. */
    @Test
    void beforeTheFixesEveryFailedHandleReportsTheIdAgain() {
        NixlDecodeConnector nixl = pulling(BEFORE_BOTH, 3);
        nixl.failHandle("R", 0);
        assertEquals(Set.of("R"), nixl.getFinished(Set.of()).finishedRecving());
        nixl.failHandle("R", 1);
        nixl.getFinished(Set.of());
        assertEquals(List.of(ViolationKind.ENGINE_ASSERT), kinds(), "handle 2 still runs; the queue re-reported R");
        assertTrue(nixl.isPullInFlight("R"));
    }

    /** #54518 alone: the second report is dropped, but the first still came while handle 1 was writing. */
    @Test
    void with54518TheRepeatIsDroppedNotAsserted() {
        NixlDecodeConnector nixl = pulling(FixSet.all().without(Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP), 2);
        nixl.failHandle("R", 0);
        assertEquals(Set.of("R"), nixl.getFinished(Set.of()).finishedRecving());
        nixl.completeHandle("R", 1);
        assertEquals(new KvConnectorOutput(Set.of(), Set.of(), Set.of()), nixl.getFinished(Set.of()));
        assertTrue(nixl.isIdle());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** #56104: nothing is reported while a sibling is in progress; then once, with the blocks invalid. */
    @Test
    void with56104TheFailureWaitsForEveryHandle() {
        NixlDecodeConnector nixl = pulling(FixSet.upstreamMain(), 2);
        List<Integer> blocks = kv.getBlockIds("R");
        nixl.failHandle("R", 0);
        assertEquals(new KvConnectorOutput(Set.of(), Set.of(), Set.of()), nixl.getFinished(Set.of()));
        nixl.completeHandle("R", 1);
        assertEquals(new KvConnectorOutput(Set.of(), Set.of("R"), Set.copyOf(blocks)), nixl.getFinished(Set.of()));
        assertEquals(new KvConnectorOutput(Set.of(), Set.of(), Set.of()), nixl.getFinished(Set.of()), "once");
        assertTrue(log.isEmpty(), log.toString());
    }

    /** One handle, either way: a failure is reported in the poll that sees it, with the blocks invalid. */
    @Test
    void aSingleHandlePullFailsAsBeforeUnderEveryFixSet() {
        for (FixSet fixes : List.of(BEFORE_BOTH, FixSet.upstreamMain())) {
            KvCacheManager fresh = new KvCacheManager(new BlockPool(2, log), 4, log);
            NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", fresh, fixes);
            nixl.remotePrefill("R", 4);
            fresh.allocateSlots("R", 4);
            nixl.updateStateAfterAlloc(r, fresh.getBlockIds("R"), 4);
            nixl.failPull("R");
            assertEquals(new KvConnectorOutput(Set.of(), Set.of("R"), Set.copyOf(fresh.getBlockIds("R"))), nixl.getFinished(Set.of()), fixes.toString());
            assertEquals(new KvConnectorOutput(Set.of(), Set.of(), Set.of()), nixl.getFinished(Set.of()), "the failure was reported once: " + fixes);
            assertTrue(nixl.isIdle());
        }
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void badHandlesAndRankCountsAreRefusedLeavingThePullAsItWas() {
        NixlDecodeConnector nixl = pulling(FixSet.upstreamMain(), 2);
        assertThrows(UnknownTransferException.class, () -> nixl.completeHandle("R", 2), "no such handle");
        assertThrows(UnknownTransferException.class, () -> nixl.failHandle("R", -1), "no such handle");
        assertThrows(UnknownTransferException.class, () -> nixl.completeHandle("S", 0), "no pull of S");
        nixl.completeHandle("R", 0);
        assertThrows(UnknownTransferException.class, () -> nixl.failHandle("R", 0), "handle 0 is done already");
        assertThrows(IllegalArgumentException.class, () -> nixl.remotePrefill("S", 4, 0));
        assertTrue(nixl.isPullInFlight("R"), "handle 1 is untouched");
        assertEquals(Set.of(), nixl.getFinished(Set.of()).finishedRecving());
        nixl.completeHandle("R", 1);
        assertEquals(Set.of("R"), nixl.getFinished(Set.of()).finishedRecving());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** Before #57570 an empty receive whose handshake fails is reported as a failed receive; with it, nothing is. */
    @Test
    void aNotificationOnlyEntryIsReportedOnlyBefore57570() {
        for (boolean fixed : new boolean[] {false, true}) {
            FixSet fixes = fixed ? FixSet.upstreamMain() : FixSet.upstreamMain().without(Fix.NOTIF_ONLY_NOT_RECV_TRACKED);
            NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, fixes);
            nixl.remotePrefill("A", 4);
            nixl.handshakeWillFail("A");
            assertFalse(nixl.requestFinished(new Request("A", 1, 4, 1), List.of()).delayFreeBlocks(), "aborted before scheduling");
            assertTrue(nixl.notifiedWithoutPull("A"));
            assertEquals(new KvConnectorOutput(Set.of(), Set.of(), Set.of()), nixl.getFinished(Set.of()), "the handshake is pending");
            assertEquals(1, nixl.failPendingHandshakes());
            assertEquals(0, nixl.failPendingHandshakes(), "nothing left for the handshake thread");
            assertEquals(fixed ? Set.of() : Set.of("A"), nixl.getFinished(Set.of()).finishedRecving(), fixed ? "#57570" : "before it");
            assertTrue(nixl.isIdle());
        }
        assertTrue(log.isEmpty(), log.toString());
    }

    /** A pull whose handshake fails writes nothing and is reported failed once, its blocks invalid, under every fix set. */
    @Test
    void aPullWhoseHandshakeFailsIsReportedFailedOnce() {
        for (FixSet fixes : List.of(BEFORE_BOTH, FixSet.upstreamMain())) {
            KvCacheManager fresh = new KvCacheManager(new BlockPool(2, log), 4, log);
            NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", fresh, fixes);
            nixl.remotePrefill("R", 4);
            nixl.handshakeWillFail("R");
            fresh.allocateSlots("R", 4);
            nixl.updateStateAfterAlloc(r, fresh.getBlockIds("R"), 4);
            assertTrue(nixl.isPullInFlight("R"), "waiting for the handshake");
            assertThrows(UnknownTransferException.class, () -> nixl.completeHandle("R", 0), "no READ posted yet");
            assertEquals(Set.of(), nixl.getFinished(Set.of()).finishedRecving());
            assertTrue(nixl.isPullInFlight("R"), "a poll keeps a pull still waiting for its handshake");
            assertEquals(1, nixl.finishInFlightTransfers(), "the environment fails the pending handshake");
            assertTrue(nixl.hasPendingTransfer("R"), "the failure is still to be reported");
            assertEquals(new KvConnectorOutput(Set.of(), Set.of("R"), Set.copyOf(fresh.getBlockIds("R"))), nixl.getFinished(Set.of()), fixes.toString());
            assertEquals(new KvConnectorOutput(Set.of(), Set.of(), Set.of()), nixl.getFinished(Set.of()), "once: " + fixes);
            assertTrue(nixl.isIdle());
        }
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void aHandshakeSetUpNeedsAnId() {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, FixSet.upstreamMain());
        assertThrows(NullPointerException.class, () -> nixl.handshakeWillFail(null));
        assertEquals(0, nixl.failPendingHandshakes(), "nothing pending: the thread has nothing to do");
        assertTrue(nixl.isIdle());
    }

    private List<ViolationKind> kinds() {
        return log.all().stream().map(Violation::kind).toList();
    }
}
