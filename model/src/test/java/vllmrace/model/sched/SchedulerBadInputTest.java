package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.MatchedTokens;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.engine.Fifo;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;

/**
 * Bad input to every scheduler operation: a specific exception with a clear message and no state change, or a
 * documented no-op. Upstream's own race consequences (an assert on the busy loop) are recorded, not thrown; that
 * is tested in {@link SchedulerDetectorTest}.
 */
class SchedulerBadInputTest {
    private final ViolationLog log = new ViolationLog();
    private final BlockPool pool = new BlockPool(4, log);
    private final KvCacheManager kv = new KvCacheManager(pool, 4, log);
    private final TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.ALWAYS);
    private final Scheduler scheduler = new Scheduler(FixSet.all(), log, kv, connector);
    private String before;

    @Test
    void aSchedulerClassAndBatchCountAreRequired() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> new Scheduler(FixSet.all(), log, kv,
                connector, KvLoadFailurePolicy.FAIL, SchedulerKind.SCHEDULER, 0));
        assertEquals("max_concurrent_batches must be >= 1, got 0", zero.getMessage());
        NullPointerException kind = assertThrows(NullPointerException.class, () -> new Scheduler(FixSet.all(), log, kv,
                connector, KvLoadFailurePolicy.FAIL, null, 1));
        assertEquals("kind", kind.getMessage());
        NullPointerException role = assertThrows(NullPointerException.class, () -> new vllmrace.model.connector.multi.MultiConnector(
                FixSet.all(), null, List.of(new vllmrace.model.connector.multi.NixlDecodeConnector("NixlConnector", kv, FixSet.all()))));
        assertEquals("kvRole", role.getMessage());
        assertTrue(log.isEmpty(), log.toString());
    }

    @BeforeEach
    void runningRequestR() {
        scheduler.addRequest(new Request("R", 1, 4, 2));
        SchedulerOutput first = scheduler.schedule();
        scheduler.updateFromOutput(first, ModelRunnerOutput.execute(first, connector));
        before = state();
    }

    private String state() {
        return scheduler.requestsSnapshot() + " running=" + scheduler.runningSnapshot() + " waiting=" + scheduler.waitingSnapshot()
                + " finished=" + scheduler.finishedReqIds() + " blocks=" + kv.getBlockIds("R") + " free=" + pool.numFreeBlocks();
    }

    private void assertUnchanged() {
        assertEquals(before, state(), "bad input changed the state");
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void nullRequestIsRejected() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> scheduler.addRequest(null));
        assertEquals("request", e.getMessage());
        assertUnchanged();
    }

    @Test
    void negativeOrZeroCountsAreRejectedAtConstruction() {
        IllegalArgumentException prompt = assertThrows(IllegalArgumentException.class, () -> new Request("X", 2, -1, 4));
        assertEquals("num_prompt_tokens must be >= 0, got -1 for request X", prompt.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Request("X", 2, 4, 0));
        assertThrows(IllegalArgumentException.class, () -> new Request("", 2, 4, 1));
        assertThrows(IllegalArgumentException.class, () -> new EngineCoreRequest("X", 2, -4, 1));
        IllegalArgumentException tokens = assertThrows(IllegalArgumentException.class,
                () -> new SchedulerOutput(9, Map.of("R", -1), Set.of()));
        assertEquals("num_scheduled_tokens[R] must be > 0, got -1", tokens.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new SchedulerOutput(9, Map.of("R", 0), Set.of()));
        assertThrows(IllegalArgumentException.class, () -> new MatchedTokens(-2, false));
        assertThrows(IllegalArgumentException.class, () -> new MatchedTokens(0, true));
        assertThrows(IllegalArgumentException.class, () -> connector.remotePrefill("X", 0));
        assertUnchanged();
    }

    @Test
    void finishRequestsOfAnUnknownIdIsADocumentedNoOp() {
        assertEquals(List.of(), scheduler.finishRequests(List.of("never-added"), RequestStatus.FINISHED_ABORTED));
        assertUnchanged();
    }

    @Test
    void doubleAbortIsANoOpTheSecondTime() {
        assertEquals(List.of("R"), scheduler.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED));
        String afterFirst = state();
        assertEquals(List.of(), scheduler.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED));
        assertEquals(List.of(), scheduler.finishRequests(List.of("R", "R"), RequestStatus.FINISHED_ABORTED));
        assertEquals(afterFirst, state());
        assertEquals(1, connector.requestFinishedCalls("R"));
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void oneIdTwiceInOneCallIsFinishedOnce() {
        assertEquals(List.of("R"), scheduler.finishRequests(List.of("R", "R"), RequestStatus.FINISHED_ABORTED));
        assertEquals(1, scheduler.requestsSnapshot().get(0).numFreeRequestCalls());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void finishRequestsRejectsANonFinishedStatusAndNullsBeforeAnyChange() {
        IllegalArgumentException status = assertThrows(IllegalArgumentException.class,
                () -> scheduler.finishRequests(List.of("R"), RequestStatus.RUNNING));
        assertEquals("finish_requests needs a finished status, got RUNNING", status.getMessage());
        assertThrows(NullPointerException.class, () -> scheduler.finishRequests(null, RequestStatus.FINISHED_ABORTED));
        assertThrows(NullPointerException.class, () -> scheduler.finishRequests(List.of("R"), null));
        assertThrows(NullPointerException.class, () -> scheduler.finishRequests(Arrays.asList("R", null), RequestStatus.FINISHED_ABORTED));
        assertUnchanged();
    }

    @Test
    void updateFromOutputRejectsNullsAndSkipsAnUnknownId() {
        assertThrows(NullPointerException.class, () -> scheduler.updateFromOutput(null, new ModelRunnerOutput(List.of())));
        SchedulerOutput unknown = new SchedulerOutput(99, Map.of("ghost", 1), Set.of());
        assertThrows(NullPointerException.class, () -> scheduler.updateFromOutput(unknown, null));
        assertUnchanged();
        // documented: an id no longer in requests is skipped ("aborted while the model was executing it")
        assertEquals(List.of(), scheduler.updateFromOutput(unknown, ModelRunnerOutput.execute(unknown)));
        assertUnchanged();
    }

    @Test
    void completingATransferTheConnectorDoesNotHaveIsRejected() {
        UnknownTransferException load = assertThrows(UnknownTransferException.class, () -> connector.completeLoad("R"));
        assertEquals("no async load of request R is in flight", load.getMessage());
        assertThrows(UnknownTransferException.class, () -> connector.completeSave("R"));
        assertThrows(UnknownTransferException.class, () -> connector.failLoad("ghost"));
        assertThrows(NullPointerException.class, () -> connector.completeSave(null));
        assertUnchanged();
        assertEquals(KvConnectorOutput.EMPTY, connector.getFinished(Set.of()));
    }

    @Test
    void failingALoadAtABlockItDoesNotHaveIsRejected() {
        connector.remotePrefill("L", 4);
        scheduler.addRequest(new Request("L", 9, 4, 1));
        scheduler.schedule(); // L's load of one block is in flight
        String before = scheduler.requestsSnapshot() + " " + connector.inFlightLoadTargets();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> connector.failLoad("L", 1));
        assertEquals("load of L has 1 block(s); no block 1", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> connector.failLoad("L", -1));
        assertEquals(before, scheduler.requestsSnapshot() + " " + connector.inFlightLoadTargets());
        assertEquals(KvConnectorOutput.EMPTY, connector.getFinished(Set.of()), "the load is still in flight, not failed");
    }

    @Test
    void misconfiguredEnginesAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> new Scheduler(FixSet.all(), log, null, connector));
        IllegalArgumentException queue = assertThrows(IllegalArgumentException.class, () -> new EngineCore(scheduler, new Fifo<>(),
                new Fifo<>(), log, new StepLog(), connector, 0));
        assertEquals("batch_queue_size must be >= 1, got 0", queue.getMessage());
        assertUnchanged();
    }
}
