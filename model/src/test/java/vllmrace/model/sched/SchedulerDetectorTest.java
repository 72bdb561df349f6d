package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;

/**
 * Each scheduler detector fires on the upstream sequence it guards against, on the scheduler alone (no actors),
 * and the fix switch that closes it keeps the log empty. The KV detectors themselves are tested in
 * {@code vllmrace.model.kv}; here they fire through the scheduler and the connector.
 */
class SchedulerDetectorTest {
    /** Upstream today: every fix ON but seed 003's proposed skip of late reports, which hides the engine's death. */
    private static final FixSet UPSTREAM = FixSet.all().without(Fix.SCHEDULER_SKIP_LATE_REPORT);
    private final ViolationLog log = new ViolationLog();
    private final BlockPool pool = new BlockPool(2, log);
    private final KvCacheManager kv = new KvCacheManager(pool, 4, log);

    private Scheduler scheduler(FixSet fixes, TestAsyncConnector connector) {
        return new Scheduler(fixes, log, kv, connector);
    }

    private static List<ViolationKind> kinds(ViolationLog log) {
        return log.all().stream().map(v -> v.kind()).toList();
    }

    /** Schedules and processes one step: every scheduled request samples a token; the worker reports transfers. */
    private static SchedulerOutput step(Scheduler scheduler, TestAsyncConnector connector) {
        SchedulerOutput out = scheduler.schedule();
        scheduler.updateFromOutput(out, ModelRunnerOutput.execute(out, connector));
        return out;
    }

    @Test
    void sc3AndSc1_outputForAnAbortedDelayFreedRequest_withoutIsFinishedGuard() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.ALWAYS);
        Scheduler s = scheduler(FixSet.all().without(Fix.IS_FINISHED_GUARD), connector);
        s.addRequest(new Request("R", 1, 4, 1));
        SchedulerOutput inFlight = s.schedule();
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED); // saved: R stays, finished
        s.updateFromOutput(inFlight, ModelRunnerOutput.execute(inFlight, connector));
        assertEquals(List.of(ViolationKind.OUTPUT_FOR_FINISHED_REQUEST, ViolationKind.DOUBLE_FREE_REQUEST), kinds(log));
        assertEquals(2, connector.requestFinishedCalls("R"));
    }

    @Test
    void isFinishedGuardSkipsTheOutput() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.ALWAYS);
        Scheduler s = scheduler(FixSet.all(), connector);
        s.addRequest(new Request("R", 1, 4, 1));
        SchedulerOutput inFlight = s.schedule();
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        assertEquals(List.of(), s.updateFromOutput(inFlight, ModelRunnerOutput.execute(inFlight, connector)));
        connector.finishInFlightTransfers();
        step(s, connector); // ships R in finished_req_ids; the worker reports the save
        assertTrue(s.requestsSnapshot().isEmpty());
        assertEquals(0, pool.numUsedBlocks());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void sc1AndLateReport_abortOfAFinishedDelayFreedRequest_withoutSkip() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.ON_SUCCESS);
        Scheduler s = scheduler(UPSTREAM.without(Fix.SKIP_ABORT_OF_FINISHED), connector);
        s.addRequest(new Request("R", 1, 4, 1));
        step(s, connector); // R finishes by length; the send delays the free
        assertEquals(List.of("R"), s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED));
        assertTrue(s.requestsSnapshot().isEmpty(), "the re-free released R while its send is in flight");
        connector.finishInFlightTransfers();
        step(s, connector);
        assertEquals(List.of(ViolationKind.DOUBLE_FREE_REQUEST, ViolationKind.LATE_TRANSFER_REPORT), kinds(log));
        assertTrue(log.engineDead());
    }

    @Test
    void sc4_abortedLoadFreedAtOnce_loadLandsInTheReallocatedBlock() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        connector.remotePrefill("R", 8);
        Scheduler s = scheduler(FixSet.all().without(Fix.DELAY_FREE_ABORTED_LOAD), connector);
        s.addRequest(new Request("R", 1, 8, 1));
        s.addRequest(new Request("R2", 2, 8, 1));
        s.schedule(); // R: both blocks, load in flight; R2: none left
        assertEquals(RequestStatus.WAITING_FOR_REMOTE_KVS, s.getRequest("R").status());
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        assertEquals(Set.of("R2"), s.schedule().numScheduledTokens().keySet());
        connector.completeLoad("R");
        assertEquals(List.of(ViolationKind.WRITE_INTO_FREED_BLOCK, ViolationKind.WRITE_INTO_FREED_BLOCK), kinds(log));
        assertTrue(log.all().get(0).detail().contains("request 'R2'"), log.toString());
    }

    @Test
    void delayFreeOfAnAbortedLoadHoldsTheBlocksUntilFinishedRecving() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        connector.remotePrefill("R", 8);
        Scheduler s = scheduler(FixSet.all(), connector);
        s.addRequest(new Request("R", 1, 8, 1));
        s.addRequest(new Request("R2", 2, 8, 1));
        s.schedule();
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        assertEquals(Set.of(), s.schedule().numScheduledTokens().keySet(), "R2 must wait: R's blocks are still written");
        connector.completeLoad("R");
        step(s, connector); // finished_recving(R) frees R
        assertEquals(Set.of("R2"), s.schedule().numScheduledTokens().keySet());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void sc5_abortAfterFinishedRecving_withTheNaiveFlag_neverReleased() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        connector.remotePrefill("R", 4);
        Scheduler s = scheduler(FixSet.all().without(Fix.DELAY_FREE_UNLESS_RECVED), connector);
        s.addRequest(new Request("R", 1, 4, 1));
        s.schedule();
        connector.completeLoad("R");
        step(s, connector); // finished_recving(R): R is ready, still WAITING_FOR_REMOTE_KVS
        assertEquals(Set.of("R"), s.finishedRecvingKvReqIds());
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        assertEquals(List.of("R"), s.unreleasableDelayFreed());
        assertTrue(s.reclaimPending("R"), "#46289's timer runs for R (its proposal is on here); SC5 still names R at once");
        assertFalse(s.reclaimPending("other"));
        s.checkQuiescence();
        assertEquals(List.of(ViolationKind.DELAY_FREED_NEVER_RELEASED, ViolationKind.BLOCK_LEAK), kinds(log));
    }

    @Test
    void theRefinementFreesAtOnceWhenTheRecvAlreadyArrived() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        connector.remotePrefill("R", 4);
        Scheduler s = scheduler(FixSet.all(), connector);
        s.addRequest(new Request("R", 1, 4, 1));
        s.schedule();
        connector.completeLoad("R");
        step(s, connector);
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        assertTrue(s.requestsSnapshot().isEmpty());
        s.checkQuiescence();
        assertTrue(log.isEmpty(), log.toString());
        assertEquals(Set.of(), s.finishedRecvingKvReqIds());
    }

    @Test
    void reportsForIdsTheSchedulerDoesNotHoldKillTheEngine() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        Scheduler s = scheduler(UPSTREAM, connector);
        SchedulerOutput empty = new SchedulerOutput(1, Map.of(), Set.of());
        s.updateFromOutput(empty, new ModelRunnerOutput(List.of(), new KvConnectorOutput(Set.of("gone"), Set.of("lost"), Set.of())));
        assertEquals(List.of(ViolationKind.LATE_TRANSFER_REPORT, ViolationKind.LATE_TRANSFER_REPORT), kinds(log));
        assertTrue(log.engineDead());
    }

    /**
     * #42157: {@code _update_after_schedule} looks up {@code requests[id]} unchecked. A duplicate ADD (ids not
     * randomized) overwrites the running X@1's entry; the ABORT meant for X@1 finishes X@2 and deletes the entry, while
     * X@1 is still in running: the next schedule() schedules X@1 and its lookup raises KeyError on the busy loop.
     */
    @Test
    void aScheduledIdThatIsNoLongerInRequestsKillsTheEngineInUpdateAfterSchedule() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        Scheduler s = scheduler(FixSet.all(), connector);
        s.addRequest(new Request("X", 1, 4, 3));
        step(s, connector);
        s.addRequest(new Request("X", 2, 4, 3)); // X@2 overwrites requests[X]
        s.finishRequests(List.of("X"), RequestStatus.FINISHED_ABORTED); // finishes X@2, frees it: del requests[X]
        assertNull(s.getRequest("X"), "the only entry, X@2's, is gone");
        assertEquals(1, s.runningSnapshot().size(), "X@1 still runs");
        s.schedule();
        assertEquals(List.of(ViolationKind.DUPLICATE_LIVE_REQUEST, ViolationKind.ENGINE_ASSERT), kinds(log));
        assertTrue(log.all().get(1).detail().contains("#42157"), log.toString());
    }

    @Test
    void seed003SkipOfLateReportsKeepsTheEngineAlive() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        Scheduler s = scheduler(FixSet.all(), connector);
        SchedulerOutput empty = new SchedulerOutput(1, Map.of(), Set.of());
        s.updateFromOutput(empty, new ModelRunnerOutput(List.of(), new KvConnectorOutput(Set.of("gone"), Set.of("lost"), Set.of())));
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void aRecvForARunningRequestFailsUpstreamsIsFinishedAssert() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        Scheduler s = scheduler(UPSTREAM, connector);
        s.addRequest(new Request("R", 1, 4, 2));
        s.schedule();
        s.updateFromOutput(new SchedulerOutput(2, Map.of(), Set.of()),
                new ModelRunnerOutput(List.of(), new KvConnectorOutput(Set.of(), Set.of("R"), Set.of())));
        assertEquals(List.of(ViolationKind.ENGINE_ASSERT), kinds(log));
    }

    @Test
    void underTheFailPolicyAFailedLoadEndsInOneErrorOutputAndItsBlocksReturnWithTheRecv() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        connector.remotePrefill("R", 4);
        Scheduler s = scheduler(FixSet.all(), connector); // kv_load_failure_policy defaults to "fail" (#34896)
        s.addRequest(new Request("R", 1, 4, 1));
        Request r = s.getRequest("R");
        s.schedule();
        connector.failLoad("R");
        SchedulerOutput out = s.schedule();
        List<vllmrace.model.engine.EngineCoreOutput> outputs = s.updateFromOutput(out, ModelRunnerOutput.execute(out, connector));
        assertEquals(List.of(new vllmrace.model.engine.EngineCoreOutput("R", 1, 0, Scheduler.FINISH_REASON_ERROR)), outputs);
        assertEquals(RequestStatus.FINISHED_ERROR, r.status());
        assertEquals(1, connector.requestFinishedCalls("R"));
        assertTrue(s.requestsSnapshot().isEmpty(), "finished_recving in the same output freed it");
        assertEquals(0, pool.numUsedBlocks());
        s.checkQuiescence();
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void underTheRecomputePolicyAFailedLoadWithNoValidBlockIsRecomputedWhole() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        connector.remotePrefill("R", 4);
        Scheduler s = new Scheduler(FixSet.all(), log, kv, connector, KvLoadFailurePolicy.RECOMPUTE);
        s.addRequest(new Request("R", 1, 4, 1));
        s.schedule();
        connector.failLoad("R");
        step(s, connector);
        assertEquals(Set.of("R"), s.failedRecvingKvReqIds());
        SchedulerOutput rerun = s.schedule();
        assertEquals(Map.of("R", 4), rerun.numScheduledTokens(), "the whole prompt is recomputed");
        assertEquals(Set.of(), s.failedRecvingKvReqIds());
        s.updateFromOutput(rerun, ModelRunnerOutput.execute(rerun, connector));
        assertTrue(s.requestsSnapshot().isEmpty());
        s.checkQuiescence();
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void underTheRecomputePolicyTheValidPrefixIsKept() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        connector.remotePrefill("R", 8);
        Scheduler s = new Scheduler(FixSet.all(), log, kv, connector, KvLoadFailurePolicy.RECOMPUTE);
        s.addRequest(new Request("R", 1, 8, 1));
        s.schedule();
        List<Integer> blocks = kv.getBlockIds("R");
        connector.failLoad("R", 1); // block 0 landed, block 1 did not
        step(s, connector);
        assertEquals(4, s.getRequest("R").numComputedTokens(), "cut back to the first invalid block, not to 0");
        assertEquals(Map.of("R", 4), s.schedule().numScheduledTokens(), "only the invalid block's tokens are recomputed");
        assertEquals(blocks, kv.getBlockIds("R"), "the valid block is kept, the invalid one rewritten in place");
        assertTrue(log.isEmpty(), log.toString());
    }

    /** One load fails while another, healthy one is still in flight: only the failed one is cut back or failed. */
    @Test
    void aFailedLoadBesideAHealthyOneTouchesOnlyItself() {
        for (KvLoadFailurePolicy policy : KvLoadFailurePolicy.values()) {
            ViolationLog log = new ViolationLog();
            KvCacheManager kv = new KvCacheManager(new vllmrace.model.kv.BlockPool(8, log), 4, log);
            TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
            connector.remotePrefill("H", 8);
            connector.remotePrefill("R", 8);
            Scheduler s = new Scheduler(FixSet.all(), log, kv, connector, policy);
            s.addRequest(new Request("H", 1, 8, 1));
            s.addRequest(new Request("R", 2, 8, 1));
            s.schedule(); // both loads start: two blocks each
            connector.failLoad("R", 1);
            step(s, connector);
            Request h = s.getRequest("H");
            assertEquals(RequestStatus.WAITING_FOR_REMOTE_KVS, h.status(), policy + ": the healthy load still runs");
            assertEquals(0, h.numComputedTokens(), policy.toString());
            assertEquals(2, kv.numBlocks("H"), policy.toString());
            if (policy == KvLoadFailurePolicy.RECOMPUTE) {
                assertEquals(4, s.getRequest("R").numComputedTokens(), "cut back to its first invalid block");
                assertEquals(Set.of("R"), s.failedRecvingKvReqIds());
            } else {
                assertNull(s.getRequest("R"), "failed, finished and freed");
            }
            assertTrue(log.isEmpty(), policy + ": " + log);
        }
    }

    @Test
    void aSendCompletionForARunningRequestFailsFreeBlocksAssert() {
        TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        Scheduler s = scheduler(FixSet.all().without(Fix.SCHEDULER_SKIP_LATE_REPORT), connector);
        s.addRequest(new Request("R", 1, 4, 2));
        s.schedule();
        s.updateFromOutput(new SchedulerOutput(2, Map.of(), Set.of()),
                new ModelRunnerOutput(List.of(), new KvConnectorOutput(Set.of("R"), Set.of(), Set.of())));
        assertEquals(List.of(ViolationKind.ENGINE_ASSERT), kinds(log));
        assertTrue(log.all().get(0).detail().contains("assert request.is_finished()"), log.toString());
        assertEquals(1, kv.numBlocks("R"), "nothing freed: the engine died at the assert");
        assertEquals(RequestStatus.RUNNING, s.getRequest("R").status());
    }

    @Test
    void asyncSchedulingDoesNotRunAStepBeyondMaxTokens() {
        Scheduler s = new Scheduler(FixSet.all(), log, kv, null);
        s.addRequest(new Request("R", 1, 4, 2));
        SchedulerOutput one = s.schedule();
        SchedulerOutput two = s.schedule(); // runs ahead: R's second (final) token
        SchedulerOutput three = s.schedule(); // placeholders reach max_tokens: nothing
        assertEquals(Map.of("R", 4), one.numScheduledTokens());
        assertEquals(Map.of("R", 1), two.numScheduledTokens());
        assertEquals(Map.of(), three.numScheduledTokens());
        s.updateFromOutput(one, ModelRunnerOutput.execute(one));
        s.updateFromOutput(two, ModelRunnerOutput.execute(two));
        assertTrue(s.requestsSnapshot().isEmpty());
        assertEquals(0, pool.numUsedBlocks());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** The request an id names for the aggregator's CN1 count: live, else the last added under it, else none. */
    @Test
    void anIdNamesItsLiveRequestElseTheLastOneAddedUnderIt() {
        Scheduler s = new Scheduler(FixSet.all(), new ViolationLog());
        assertNull(s.requestNamed("R"));
        Request first = new Request("R", 1, 1);
        s.addRequest(first);
        s.addRequest(new Request("Q", 2, 1));
        assertTrue(s.requestNamed("R") == first, "live");
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        assertTrue(s.requestNamed("R") == first, "freed: the last one added under R");
        Request second = new Request("R", 3, 1);
        s.addRequest(second);
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        assertTrue(s.requestNamed("R") == second, "the later of two freed requests under R");
        assertEquals(List.of(first, s.requestNamed("Q"), second), s.addedSnapshot());
    }
}
