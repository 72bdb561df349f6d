package vllmrace.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.MultiConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.RequestAlreadyRunningException;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.ModelRunnerOutput;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;
import vllmrace.model.sched.Scheduler;
import vllmrace.model.sched.SchedulerOutput;
import vllmrace.races.scheduler.EngineCoreRig;

/**
 * Each fix switch, ON and OFF, on the model directly (no race scenario): what the switch changes when ON, which event
 * ends what it starts, what it reports and frees, next to what goes wrong when it is OFF. A fix implemented wrong (a
 * guard on one status where upstream checks {@code is_finished()}, a flag cleared on one path only) fails here or in
 * the families the step enumerator runs.
 */
@DisplayName("fix switches")
class FixSwitchTest {

    private static final FixSet ALL = FixSet.all();
    /** Every conditional await suspends: each declared frontend step runs on its own, so a switch's step order shows. */
    private static final vllmrace.model.deploy.Configuration EVERY_AWAIT_YIELDS = vllmrace.model.deploy.Configuration.DEFAULT
            .withYields(java.util.EnumSet.allOf(vllmrace.model.asyncio.YieldCondition.class));

    // ---------------------------------------------------------------------------------------------------- frontend

    @Nested
    @DisplayName("ORDERED_ABORT (#15326)")
    class OrderedAbort {
        private VllmInstance running(FixSet fixes) {
            VllmInstance vllm = new VllmInstance(fixes, EVERY_AWAIT_YIELDS);
            vllm.asyncLlm().addRequest("X", 4).run().join();
            vllm.engineCore().processInputQueue();
            return vllm;
        }

        @Test
        void onTheStateStaysUntilTheAbortIsOnTheWire() {
            VllmInstance vllm = running(ALL.without(Fix.UNIQUE_INTERNAL_IDS));
            Coroutine<List<String>> abort = vllm.asyncLlm().abort("X");
            abort.runNextStep(); // flatten_req_to_abort: ids computed, nothing dropped
            assertNotNull(vllm.outputProcessor().getRequestState("X"));
            assertTrue(vllm.inputSocket().isEmpty());
            assertInstanceOf(RequestAlreadyRunningException.class, vllm.asyncLlm().addRequest("X", 4).run().failure());
            abort.runNextStep(); // ABORT on the wire, state still held
            assertFalse(vllm.inputSocket().isEmpty());
            assertNotNull(vllm.outputProcessor().getRequestState("X"));
            abort.run(); // only now the state goes
            assertNull(vllm.outputProcessor().getRequestState("X"));
            assertEquals(List.of("X"), abort.join());
        }

        @Test
        void offTheStateGoesBeforeTheAbortIsSent() {
            VllmInstance vllm = running(ALL.without(Fix.UNIQUE_INTERNAL_IDS).without(Fix.ORDERED_ABORT));
            Coroutine<List<String>> abort = vllm.asyncLlm().abort("X");
            abort.runNextStep(); // abort_requests: dropped at once
            assertNull(vllm.outputProcessor().getRequestState("X"));
            assertTrue(vllm.inputSocket().isEmpty(), "no ABORT on the wire yet: the #15326 window");
            assertNull(vllm.asyncLlm().addRequest("X", 4).run().failure(), "a re-add slips in");
        }
    }

    @Nested
    @DisplayName("ORDERED_FINISH_ABORT (suite proposal for #23697)")
    class OrderedFinishAbort {
        private VllmInstance stopped(FixSet fixes) {
            VllmInstance vllm = new VllmInstance(fixes, EVERY_AWAIT_YIELDS);
            vllm.asyncLlm().addRequest("X", new vllmrace.model.frontend.SamplingParams(1, 8, 1)).run().join();
            vllm.engineCore().runBusyLoopOnce(); // one token, with the stop string in it
            return vllm;
        }

        @Test
        void onTheStoppedRequestsStateOutlivesItsAbort() {
            VllmInstance vllm = stopped(ALL.without(Fix.UNIQUE_INTERNAL_IDS));
            Coroutine<Integer> handler = vllm.asyncLlm().outputHandler();
            handler.runNextStep(); // get_output_async + process_outputs (a done await between them) finds the stop string
            assertNotNull(vllm.outputProcessor().getRequestState("X"), "kept until the ABORT is sent");
            handler.runNextStep(); // abort_requests_async(reqs_to_abort)
            assertFalse(vllm.inputSocket().isEmpty());
            handler.run(); // _finish_request
            assertNull(vllm.outputProcessor().getRequestState("X"));
        }

        @Test
        void offTheStateGoesInProcessOutputs() {
            VllmInstance vllm = stopped(ALL.without(Fix.UNIQUE_INTERNAL_IDS).without(Fix.ORDERED_FINISH_ABORT));
            Coroutine<Integer> handler = vllm.asyncLlm().outputHandler();
            handler.runNextStep();
            assertNull(vllm.outputProcessor().getRequestState("X"), "dropped before its ABORT is sent");
            assertTrue(vllm.inputSocket().isEmpty());
        }
    }

    @Nested
    @DisplayName("UNIQUE_INTERNAL_IDS (#27987)")
    class UniqueInternalIds {
        @Test
        void onEngineCoreSeesASuffixedIdAndAbortByExternalIdResolvesIt() {
            VllmInstance vllm = new VllmInstance(ALL);
            vllm.asyncLlm().addRequest("X", 4).run().join();
            vllm.engineCore().processInputQueue();
            assertNotNull(vllm.scheduler().getRequest("X-1"));
            assertNull(vllm.scheduler().getRequest("X"));
            assertEquals(List.of("X-1"), vllm.asyncLlm().abort("X").run().join());
            vllm.engineCore().processInputQueue();
            assertNull(vllm.scheduler().getRequest("X-1"), "the ABORT for X reached X-1");
        }

        @Test
        void offEngineCoreSeesTheCallersId() {
            VllmInstance vllm = new VllmInstance(ALL.without(Fix.UNIQUE_INTERNAL_IDS));
            vllm.asyncLlm().addRequest("X", 4).run().join();
            vllm.engineCore().processInputQueue();
            assertNotNull(vllm.scheduler().getRequest("X"));
        }
    }

    // --------------------------------------------------------------------------------------------------- scheduler

    /** A scheduler over two blocks with a test connector, and one request R (4 prompt tokens). */
    private static final class Sched {
        final ViolationLog log = new ViolationLog();
        final KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
        final TestAsyncConnector connector;
        final Scheduler s;

        Sched(FixSet fixes, SavePolicy policy) {
            connector = new TestAsyncConnector(kv, policy, fixes);
            s = new Scheduler(fixes, log, kv, connector);
        }

        void update(SchedulerOutput out) {
            s.updateFromOutput(out, ModelRunnerOutput.execute(out, connector));
        }
    }

    /** How R gets finished while its output is in flight. */
    enum FinishPath { ABORTED, STOPPED, ERROR }

    private static void finish(Sched t, FinishPath path, SchedulerOutput inFlight) {
        switch (path) {
            case ABORTED -> t.s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
            case ERROR -> t.s.finishRequests(List.of("R"), RequestStatus.FINISHED_ERROR);
            case STOPPED -> t.update(inFlight); // the stop token lands; the step scheduled after it is still in flight
        }
    }

    @Nested
    @DisplayName("IS_FINISHED_GUARD (#33377)")
    class IsFinishedGuard {
        private Sched inFlight(FixSet fixes, FinishPath path, SchedulerOutput[] pending) {
            Sched t = new Sched(fixes, SavePolicy.ALWAYS);
            t.s.addRequest(new Request("R", 1, 4, 4, 1)); // its first output token is a stop token
            SchedulerOutput first = t.s.schedule();
            SchedulerOutput second = t.s.schedule(); // async scheduling ran ahead
            finish(t, path, first);
            pending[0] = path == FinishPath.STOPPED ? second : first;
            return t;
        }

        @ParameterizedTest(name = "R finished as {0}")
        @EnumSource(FinishPath.class)
        void onAnInFlightOutputOfAFinishedRequestIsSkipped(FinishPath path) {
            SchedulerOutput[] pending = new SchedulerOutput[1];
            Sched t = inFlight(ALL, path, pending);
            int tokens = t.s.getRequest("R").numOutputTokens();
            assertEquals(List.of(), t.s.updateFromOutput(pending[0], ModelRunnerOutput.execute(pending[0], t.connector)));
            assertEquals(tokens, t.s.getRequest("R").numOutputTokens(), "no token appended");
            assertEquals(1, t.connector.requestFinishedCalls("R"), "request_finished once");
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        @ParameterizedTest(name = "R finished as {0}")
        @EnumSource(FinishPath.class)
        void offTheOutputIsAppliedToTheFinishedRequest(FinishPath path) {
            SchedulerOutput[] pending = new SchedulerOutput[1];
            Sched t = inFlight(ALL.without(Fix.IS_FINISHED_GUARD), path, pending);
            t.update(pending[0]);
            assertTrue(t.log.has(ViolationKind.OUTPUT_FOR_FINISHED_REQUEST), t.log.toString());
        }
    }

    @Nested
    @DisplayName("SKIP_ABORT_OF_FINISHED (#25067)")
    class SkipAbortOfFinished {
        /** R finished by a normal stop (length or a stop token), its blocks delay-freed for the decoder's read. */
        private Sched finishedDelayFreed(FixSet fixes, boolean byStopToken) {
            Sched t = new Sched(fixes, SavePolicy.ON_SUCCESS);
            t.s.addRequest(byStopToken ? new Request("R", 1, 4, 4, 1) : new Request("R", 1, 4, 1));
            t.update(t.s.schedule());
            assertEquals(byStopToken ? RequestStatus.FINISHED_STOPPED : RequestStatus.FINISHED_LENGTH_CAPPED,
                    t.s.getRequest("R").status());
            return t;
        }

        @ParameterizedTest(name = "R finished by a stop token: {0}")
        @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
        void onAnAbortOfAFinishedRequestChangesNothingAndItsSendStillFreesIt(boolean byStopToken) {
            Sched t = finishedDelayFreed(ALL, byStopToken);
            assertEquals(List.of(), t.s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED));
            assertEquals(1, t.connector.requestFinishedCalls("R"));
            t.connector.finishInFlightTransfers();
            t.update(t.s.schedule()); // finished_req_ids ships R; the worker reports the send: R freed
            assertTrue(t.s.requestsSnapshot().isEmpty());
            assertEquals(0, t.kv.numUsedBlocks());
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        @ParameterizedTest(name = "R finished by a stop token: {0}")
        @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
        void offTheAbortFreesTheRequestAgain(boolean byStopToken) {
            Sched t = finishedDelayFreed(ALL.without(Fix.SKIP_ABORT_OF_FINISHED), byStopToken);
            assertEquals(List.of("R"), t.s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED));
            assertTrue(t.log.has(ViolationKind.DOUBLE_FREE_REQUEST));
            assertEquals(2, t.connector.requestFinishedCalls("R"));
        }
    }

    @Nested
    @DisplayName("DELAY_FREE_ABORTED_LOAD (#32255) and DELAY_FREE_UNLESS_RECVED (its review)")
    class DelayFreeAbortedLoad {
        /** R waits for its remote KV: its block is the async load's target. */
        private Sched loading(FixSet fixes) {
            Sched t = new Sched(fixes, SavePolicy.NEVER);
            t.connector.remotePrefill("R", 4);
            t.s.addRequest(new Request("R", 1, 4, 1));
            t.s.schedule();
            assertEquals(RequestStatus.WAITING_FOR_REMOTE_KVS, t.s.getRequest("R").status());
            return t;
        }

        @Test
        void onTheAbortedLoadsBlocksStayUntilItsFinishedRecving() {
            Sched t = loading(ALL);
            t.s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
            assertEquals(1, t.kv.numUsedBlocks(), "the load still writes the block");
            assertNotNull(t.s.getRequest("R"), "R stays in requests, finished");
            t.connector.completeLoad("R");
            t.update(t.s.schedule()); // finished_recving(R): R is finished, so _free_blocks
            assertEquals(0, t.kv.numUsedBlocks());
            assertTrue(t.s.requestsSnapshot().isEmpty());
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        @Test
        void offTheBlocksAreFreedUnderTheRunningLoad() {
            Sched t = loading(ALL.without(Fix.DELAY_FREE_ABORTED_LOAD));
            t.s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
            assertEquals(0, t.kv.numUsedBlocks());
            t.connector.completeLoad("R"); // the load lands in a freed block
            assertTrue(t.log.has(ViolationKind.WRITE_INTO_FREED_BLOCK), t.log.toString());
        }

        private Sched recvedNotPromoted(FixSet fixes) {
            Sched t = loading(fixes);
            t.connector.completeLoad("R");
            t.update(t.s.schedule()); // finished_recving(R) arrives; R not yet promoted
            assertTrue(t.s.finishedRecvingKvReqIds().contains("R"));
            return t;
        }

        @Test
        void unlessRecvedOnAnAbortAfterTheRecvFreesAtOnce() {
            Sched t = recvedNotPromoted(ALL);
            t.s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
            assertEquals(0, t.kv.numUsedBlocks());
            assertTrue(t.s.requestsSnapshot().isEmpty());
            assertFalse(t.s.finishedRecvingKvReqIds().contains("R"), "the id is discarded from the set");
            t.s.checkQuiescence();
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        @Test
        void unlessRecvedOffTheNaiveFlagWaitsForAReportThatNeverComes() {
            Sched t = recvedNotPromoted(ALL.without(Fix.DELAY_FREE_UNLESS_RECVED));
            t.s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
            t.s.checkQuiescence();
            assertTrue(t.log.has(ViolationKind.DELAY_FREED_NEVER_RELEASED), t.log.toString());
            assertTrue(t.log.has(ViolationKind.BLOCK_LEAK), t.log.toString());
        }
    }

    @Nested
    @DisplayName("SCHEDULER_SKIP_LATE_REPORT (#53049 direction 3)")
    class SchedulerSkipLateReport {
        private Sched withGoneRequest(FixSet fixes) {
            Sched t = new Sched(fixes, SavePolicy.NEVER);
            t.s.addRequest(new Request("R", 1, 4, 1));
            t.update(t.s.schedule()); // R finishes by length and is freed
            assertTrue(t.s.requestsSnapshot().isEmpty());
            return t;
        }

        private static void report(Sched t, KvConnectorOutput out) {
            SchedulerOutput next = t.s.schedule();
            t.s.updateFromOutput(next, new ModelRunnerOutput(List.of(), out));
        }

        @Test
        void onLateReportsForAGoneIdAreSkipped() {
            Sched t = withGoneRequest(ALL);
            report(t, new KvConnectorOutput(Set.of("R"), Set.of("R"), Set.of()));
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        @Test
        void offALateReportKillsTheEngine() {
            Sched t = withGoneRequest(ALL.without(Fix.SCHEDULER_SKIP_LATE_REPORT));
            report(t, new KvConnectorOutput(Set.of("R"), Set.of(), Set.of()));
            assertTrue(t.log.has(ViolationKind.LATE_TRANSFER_REPORT));
            assertTrue(t.log.engineDead());
        }
    }

    // ------------------------------------------------------------------------------------------------------ engine

    @Nested
    @DisplayName("EAGER_ABORTS (#29987)")
    class EagerAborts {
        private EngineCoreRig finalStepInFlightThenAbort(FixSet fixes) {
            EngineCoreRig rig = new EngineCoreRig(fixes, SavePolicy.ON_SUCCESS, 8);
            rig.sendAdd("R", 4, 1);
            rig.runBusyLoopOnce(); // schedule(1) runs R's final step
            rig.track("R");
            rig.engineCore().processInputQueue();
            rig.engineCore().scheduleBatch();
            rig.atomically("client", "ABORT", () -> rig.abortArrives("R"));
            rig.engineCore().processOldestBatch(); // _process_aborts_queue, then update_from_output(1)
            rig.collectOutputs();
            return rig;
        }

        @Test
        void onTheQueuedAbortWinsOverTheFinalStep() {
            EngineCoreRig rig = finalStepInFlightThenAbort(ALL);
            assertEquals(RequestStatus.FINISHED_ABORTED, rig.request("R").status());
            assertNull(rig.finishReasons("R"));
            rig.runToQuiescence();
            assertTrue(rig.allFreed(), "aborted: nothing pinned for a decoder");
            assertTrue(rig.violations().isEmpty(), rig.violations().toString());
        }

        @Test
        void offTheFinalStepCompletesAsASuccess() {
            EngineCoreRig rig = finalStepInFlightThenAbort(ALL.without(Fix.EAGER_ABORTS));
            assertEquals("length", rig.finishReasons("R"));
            assertTrue(rig.has(ViolationKind.ABORT_OVERTAKEN_BY_COMPLETION));
        }
    }

    // --------------------------------------------------------------------------------------------------- connector

    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(4, log), 4, log);
    private final Request r = new Request("R", 1, 4, 1);

    private List<Integer> blocksOfR() {
        kv.allocateSlots("R", 4);
        return kv.getBlockIds("R");
    }

    @Nested
    @DisplayName("MULTI_CONNECTOR_LOAD_DEDUP (#53049 direction 1)")
    class MultiConnectorLoadDedup {
        private MultiConnector twoLoads(FixSet fixes, NixlDecodeConnector[] nixl, LmCacheConnector[] lm) {
            nixl[0] = new NixlDecodeConnector("NIXL", kv, fixes);
            lm[0] = LmCacheConnector.outOfTree("LMCache", kv, false);
            nixl[0].remotePrefill("R", 4);
            lm[0].cachedPrefix("R", 4);
            MultiConnector multi = new MultiConnector(fixes, List.of(nixl[0], lm[0]));
            multi.getNumNewMatchedTokens(r, 0);
            multi.updateStateAfterAlloc(r, blocksOfR(), 4);
            return multi;
        }

        @Test
        void onTheRecvIsReportedOnceAfterTheLastLoad() {
            NixlDecodeConnector[] nixl = new NixlDecodeConnector[1];
            LmCacheConnector[] lm = new LmCacheConnector[1];
            MultiConnector multi = twoLoads(ALL, nixl, lm);
            lm[0].completeLoad("R");
            assertEquals(Set.of(), multi.getFinished(Set.of()).finishedRecving(), "the first of two loads is absorbed");
            nixl[0].completePull("R");
            assertEquals(Set.of("R"), multi.getFinished(Set.of()).finishedRecving());
            assertEquals(Set.of(), multi.getFinished(Set.of()).finishedRecving(), "and never again");
        }

        @Test
        void offEachLoadReportsTheRecv() {
            NixlDecodeConnector[] nixl = new NixlDecodeConnector[1];
            LmCacheConnector[] lm = new LmCacheConnector[1];
            MultiConnector multi = twoLoads(ALL.without(Fix.MULTI_CONNECTOR_LOAD_DEDUP), nixl, lm);
            lm[0].completeLoad("R");
            assertEquals(Set.of("R"), multi.getFinished(Set.of()).finishedRecving());
            nixl[0].completePull("R");
            assertEquals(Set.of("R"), multi.getFinished(Set.of()).finishedRecving(), "a second terminal event");
        }
    }

    @Nested
    @DisplayName("NIXL_PIN_PULL_BLOCKS (#53049 direction 2)")
    class NixlPinPullBlocks {
        private NixlDecodeConnector pulling(FixSet fixes) {
            NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, fixes);
            nixl.remotePrefill("R", 4);
            nixl.getNumNewMatchedTokens(r, 0);
            nixl.updateStateAfterAlloc(r, blocksOfR(), 4);
            assertTrue(nixl.isPullInFlight("R"));
            return nixl;
        }

        @Test
        void onANormallyFinishedRequestKeepsItsBlocksWhileThePullRunsAndTheLateCompletionIsASend() {
            NixlDecodeConnector nixl = pulling(ALL);
            vllmrace.model.sched.RequestSeams.setStatus(r, RequestStatus.FINISHED_LENGTH_CAPPED);
            assertTrue(nixl.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "pinned");
            nixl.completePull("R");
            KvConnectorOutput out = nixl.getFinished(Set.of("R"));
            assertEquals(Set.of("R"), out.finishedSending(), "the late completion releases the blocks as a send");
            assertEquals(Set.of(), out.finishedRecving());
        }

        @Test
        void offTheDecodeSideNeverTakesTheBlocks() {
            NixlDecodeConnector nixl = pulling(ALL.without(Fix.NIXL_PIN_PULL_BLOCKS));
            vllmrace.model.sched.RequestSeams.setStatus(r, RequestStatus.FINISHED_LENGTH_CAPPED);
            assertFalse(nixl.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "is_d_node: return False, None");
        }
    }

    @Nested
    @DisplayName("NO_SAVE_WHILE_LOADING (suite proposal for #46240)")
    class NoSaveWhileLoading {
        private MultiConnector loadingWithAnOffloader(FixSet fixes, LmCacheConnector[] offload) {
            NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, fixes);
            offload[0] = LmCacheConnector.outOfTree("Offload", kv, true);
            nixl.remotePrefill("R", 4);
            MultiConnector multi = new MultiConnector(fixes, List.of(nixl, offload[0]));
            multi.getNumNewMatchedTokens(r, 0);
            multi.updateStateAfterAlloc(r, blocksOfR(), 4);
            vllmrace.model.sched.RequestSeams.setStatus(r, RequestStatus.FINISHED_ABORTED);
            return multi;
        }

        @Test
        void onAnAbortedLoadStartsNoSaveItsRecvIsTheOnlyTerminalEvent() {
            LmCacheConnector[] offload = new LmCacheConnector[1];
            MultiConnector multi = loadingWithAnOffloader(ALL, offload);
            assertFalse(multi.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "no child saves");
            assertEquals(1, offload[0].requestFinishedCalls("R"), "request_finished is still called on abort");
            assertFalse(offload[0].hasPendingTransfer("R"));
        }

        @Test
        void offTheOffloaderStartsASaveBesideTheLoad() {
            LmCacheConnector[] offload = new LmCacheConnector[1];
            MultiConnector multi = loadingWithAnOffloader(ALL.without(Fix.NO_SAVE_WHILE_LOADING), offload);
            assertTrue(multi.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks());
            assertTrue(offload[0].hasPendingTransfer("R"), "a save and a load: two terminal events coming");
        }
    }

    // ---------------------------------------------------------------------------------------------- second wave

    @Nested
    @DisplayName("HAS_REQUESTS_COUNTS_DELAY_FREED (#43433)")
    class HasRequestsCountsDelayFreed {
        /** R finished by length, its send to the decoder in flight, its free delayed; finished_req_ids shipped. */
        private Sched sending(FixSet fixes) {
            Sched t = new Sched(fixes, SavePolicy.ON_SUCCESS);
            t.s.addRequest(new Request("R", 1, 4, 1));
            t.update(t.s.schedule());
            assertTrue(t.s.getRequest("R").isFinished());
            t.update(t.s.schedule()); // ships finished_req_ids {R}
            assertTrue(t.s.finishedReqIds().isEmpty());
            return t;
        }

        @Test
        void onTheDelayFreedRequestKeepsTheLoopSteppingUntilItsSendIsReported() {
            Sched t = sending(ALL);
            assertTrue(t.s.hasRequests(), "a finished request still in requests, beyond the queues");
            t.connector.completeSave("R");
            t.update(t.s.schedule()); // the step it keeps alive polls get_finished: finished_sending(R)
            assertFalse(t.s.hasRequests(), "nothing left: the loop may block now");
            assertEquals(0, t.kv.numUsedBlocks());
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        @Test
        void offTheLoopStopsWithTheSendUnreported() {
            Sched t = sending(ALL.without(Fix.HAS_REQUESTS_COUNTS_DELAY_FREED));
            assertFalse(t.s.hasRequests(), "before #43433: no unfinished request and no finished id to ship");
            assertEquals(1, t.kv.numUsedBlocks(), "R's block waits for a poll that never comes");
        }

        @Test
        void withoutAConnectorOnlyTheQueuesAndFinishedIdsCount() {
            ViolationLog log = new ViolationLog();
            Scheduler s = new Scheduler(ALL, log);
            s.addRequest(new Request("R", 1, 4, 1));
            assertTrue(s.hasRequests());
            SchedulerOutput out = s.schedule();
            s.updateFromOutput(out, ModelRunnerOutput.execute(out));
            assertTrue(s.hasRequests(), "finished_req_ids {R} still to ship");
            s.schedule();
            assertFalse(s.hasRequests());
        }
    }

    @Nested
    @DisplayName("RECLAIM_ABORTED_RECV (PR #46289, proposed)")
    class ReclaimAbortedRecv {
        /** R waits for a push from the prefill side; the client aborts it: its free is delayed (#32255). */
        private Sched abortedWhileWaiting(FixSet fixes) {
            Sched t = new Sched(fixes, SavePolicy.NEVER);
            t.connector.remotePrefill("R", 4);
            t.s.addRequest(new Request("R", 1, 4, 1));
            t.s.schedule();
            t.s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
            assertNotNull(t.s.getRequest("R"), "delay-freed: still in requests");
            return t;
        }

        @Test
        void onTheSweepFreesTheBlocksOnlyAfterTheGraceWhichOutlastsTheLease() {
            Sched t = abortedWhileWaiting(ALL);
            assertTrue(Scheduler.RECLAIM_GRACE_STEPS > Scheduler.KV_LEASE_STEPS);
            for (int step = 1; step < Scheduler.RECLAIM_GRACE_STEPS; step++) {
                t.update(t.s.schedule());
                assertEquals(1, t.kv.numUsedBlocks(), "step " + step + ": within the grace, the remote side may still write");
            }
            t.update(t.s.schedule());
            assertEquals(0, t.kv.numUsedBlocks(), "the grace ran out: reclaimed through _free_blocks");
            assertNull(t.s.getRequest("R"));
            t.connector.completeLoad("R"); // a push that still comes, after the reclaim
            t.update(t.s.schedule());
            assertFalse(t.log.has(ViolationKind.LATE_TRANSFER_REPORT), "the late finished_recving is ignored: " + t.log);
        }

        /** The reclaim tells the remote side (#46289's premise: the grace outlasts its lease): its push is stopped. */
        @Test
        void onTheReclaimStopsTheRemotePushSoNothingLandsInTheFreedBlocks() {
            Sched t = abortedWhileWaiting(ALL);
            for (int step = 0; step < Scheduler.RECLAIM_GRACE_STEPS; step++) {
                t.update(t.s.schedule());
            }
            assertNull(t.s.getRequest("R"), "reclaimed");
            assertEquals(0, t.connector.finishInFlightTransfers(), "the remote lease reaper stopped R's push");
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        /** Two aborted receives whose grace ends in the same step: one sweep reclaims both. */
        @Test
        void onOneSweepReclaimsEveryExpiredReceive() {
            Sched t = new Sched(ALL, SavePolicy.NEVER);
            for (String id : List.of("R", "S")) {
                t.connector.remotePrefill(id, 4);
                t.s.addRequest(new Request(id, 1, 4, 1));
            }
            t.s.schedule();
            t.s.finishRequests(List.of("R", "S"), RequestStatus.FINISHED_ABORTED);
            assertEquals(2, t.kv.numUsedBlocks(), "both delay-freed");
            for (int step = 0; step < Scheduler.RECLAIM_GRACE_STEPS; step++) {
                t.update(t.s.schedule());
            }
            assertEquals(0, t.kv.numUsedBlocks());
            assertTrue(t.s.requestsSnapshot().isEmpty(), t.s.requestsSnapshot().toString());
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        /** A reclaim happens once: a new request under the id (ids not randomized) is not swept by the old entry. */
        @Test
        void onTheSweptEntryIsGoneSoANewRequestUnderTheIdKeepsItsBlocks() {
            Sched t = abortedWhileWaiting(ALL);
            for (int step = 0; step < Scheduler.RECLAIM_GRACE_STEPS; step++) {
                t.update(t.s.schedule());
            }
            t.connector.remotePrefill("R", 4);
            t.s.addRequest(new Request("R", 2, 4, 1));
            t.update(t.s.schedule()); // the new R waits for its own push
            assertEquals(RequestStatus.WAITING_FOR_REMOTE_KVS, t.s.getRequest("R").status());
            assertEquals(1, t.kv.numUsedBlocks(), "the new R holds its block");
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        @Test
        void onAPushWithinTheGraceFreesTheRequestNormallyAndCancelsTheReclaim() {
            Sched t = abortedWhileWaiting(ALL);
            t.connector.completeLoad("R"); // a write within the lease lands in R's own blocks
            t.update(t.s.schedule());
            assertNull(t.s.getRequest("R"), "finished_recving(R) freed it");
            for (int step = 0; step < Scheduler.RECLAIM_GRACE_STEPS; step++) {
                t.update(t.s.schedule());
            }
            assertTrue(t.log.isEmpty(), "no second free when the deadline passes: " + t.log);
        }

        /** The reclaim's memory of the id, not the late-report skip, is what ignores the late push: with the skip off too. */
        @Test
        void onTheLatePushAfterTheReclaimIsIgnoredByTheReclaimsOwnMemory() {
            Sched t = abortedWhileWaiting(ALL.without(Fix.SCHEDULER_SKIP_LATE_REPORT));
            for (int step = 0; step < Scheduler.RECLAIM_GRACE_STEPS; step++) {
                t.update(t.s.schedule());
            }
            assertNull(t.s.getRequest("R"), "reclaimed");
            t.connector.completeLoad("R");
            t.update(t.s.schedule());
            assertEquals(Set.of(ViolationKind.WRITE_INTO_FREED_BLOCK), kinds(t.log), "the late finished_recving is ignored, not "
                    + "asserted; the push itself lands in the reclaimed blocks, the proposal's hazard (ConnectorFuzzTest's known findings): " + t.log);
        }

        private static Set<ViolationKind> kinds(ViolationLog log) {
            Set<ViolationKind> kinds = java.util.EnumSet.noneOf(ViolationKind.class);
            log.all().forEach(v -> kinds.add(v.kind()));
            return kinds;
        }

        /**
         * The memory lasts for one late report: a new request that re-uses the id (ids not randomized) has its own push
         * counted, so it runs and finishes, instead of waiting for ever behind the old request's ignored report.
         */
        @Test
        void onTheReclaimForgetsTheIdOnceItsLateReportCame() {
            Sched t = abortedWhileWaiting(ALL);
            for (int step = 0; step < Scheduler.RECLAIM_GRACE_STEPS; step++) {
                t.update(t.s.schedule());
            }
            t.connector.completeLoad("R"); // the old request's late push: ignored
            t.update(t.s.schedule());
            t.connector.remotePrefill("R", 4);
            t.s.addRequest(new Request("R", 2, 4, 1)); // the id again
            t.update(t.s.schedule()); // waits for its remote KVs
            assertEquals(RequestStatus.WAITING_FOR_REMOTE_KVS, t.s.getRequest("R").status());
            t.connector.completeLoad("R");
            for (int step = 0; step < 4 && t.s.getRequest("R") != null; step++) {
                t.update(t.s.schedule());
            }
            assertNull(t.s.getRequest("R"), "the new R's own push was counted: it ran and finished; " + t.s.requestsSnapshot());
            assertEquals(0, t.kv.numUsedBlocks());
            assertEquals(Set.of(ViolationKind.WRITE_INTO_FREED_BLOCK), kinds(t.log), "only the old push's write into the reclaimed blocks: " + t.log);
        }

        @Test
        void offTheAbortedReceiveHoldsItsBlocksForEver() {
            Sched t = abortedWhileWaiting(ALL.without(Fix.RECLAIM_ABORTED_RECV));
            for (int step = 0; step < 4 * Scheduler.RECLAIM_GRACE_STEPS; step++) {
                t.update(t.s.schedule());
            }
            assertEquals(1, t.kv.numUsedBlocks());
            t.s.checkLiveness(1);
            assertTrue(t.log.has(ViolationKind.REQUEST_LEAKED), t.log.toString());
        }
    }

    @Nested
    @DisplayName("NO_LOAD_BEHIND_BLOCKLESS (PR #57841, proposed)")
    class NoLoadBehindBlockless {
        /** A pool of 4: A (3 blocks) asks again later; B (2 blocks) has an async hit. One schedule(). */
        private EngineCoreRig rig(FixSet fixes) {
            EngineCoreRig rig = new EngineCoreRig(fixes, SavePolicy.NEVER, 4);
            rig.connector().chunkBeingWritten("A");
            rig.connector().remotePrefill("B", 8);
            rig.sendAdd("A", 12, 1);
            rig.sendAdd("B", 8, 1);
            rig.engineCore().processInputQueue();
            rig.scheduler().schedule();
            return rig;
        }

        @Test
        void onTheLoadBehindABlocklessSkippedRequestWaitsHoldingNothing() {
            EngineCoreRig rig = rig(ALL);
            assertEquals(RequestStatus.WAITING, rig.scheduler().getRequest("B").status(), "not admitted this step");
            assertEquals(0, rig.kvCacheManager().numBlocks("B"));
            rig.connector().chunkWritten("A");
            rig.scheduler().schedule();
            assertEquals(RequestStatus.RUNNING, rig.scheduler().getRequest("A").status(), "A gets the whole pool it needs");
        }

        @Test
        void offTheLoadTakesBlocksBehindAAndTheScanStopsAtA() {
            EngineCoreRig rig = rig(ALL.without(Fix.NO_LOAD_BEHIND_BLOCKLESS));
            assertEquals(RequestStatus.WAITING_FOR_REMOTE_KVS, rig.scheduler().getRequest("B").status());
            assertEquals(2, rig.kvCacheManager().numBlocks("B"));
            rig.connector().chunkWritten("A");
            rig.runToQuiescence();
            assertTrue(rig.has(ViolationKind.REQUEST_STUCK), rig.violations().toString());
            assertTrue(rig.scheduler().runningSnapshot().isEmpty(), "Running: 0 reqs");
        }

        /**
         * A request skipped for its deliverable stale output (#48245) holds no blocks (freed at its preemption): a load
         * behind it waits too, with the fix; without it the load starts.
         */
        @Test
        void aLoadBehindARequestSkippedForItsStaleOutputWaitsOnlyWithTheFix() {
            for (boolean on : new boolean[] {true, false}) {
                ViolationLog log = new ViolationLog();
                KvCacheManager kv = new KvCacheManager(new BlockPool(8, log), 4, log);
                TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
                Scheduler s = new Scheduler(on ? ALL : ALL.without(Fix.NO_LOAD_BEHIND_BLOCKLESS), log, kv, connector);
                s.addRequest(new Request("R", 1, 4, 3));
                s.schedule(); // R's prefill in flight
                s.preemptRequest("R");
                connector.remotePrefill("C", 4);
                s.addRequest(new Request("C", 2, 4, 1));
                SchedulerOutput out = s.schedule();
                assertFalse(out.numScheduledTokens().containsKey("R"), "R waits for its stale output");
                assertEquals(0, kv.numBlocks("R"));
                assertEquals(on ? RequestStatus.WAITING : RequestStatus.WAITING_FOR_REMOTE_KVS, s.getRequest("C").status(),
                        (on ? "with" : "without") + " #57841");
                assertEquals(on ? 0 : 1, kv.numBlocks("C"));
            }
        }

        @Test
        void onABlockHoldingSkippedRequestDoesNotHoldBackALoad() {
            EngineCoreRig rig = new EngineCoreRig(ALL, SavePolicy.NEVER, 4);
            rig.connector().remotePrefill("B", 4);
            rig.sendAdd("B", 4, 1);
            rig.engineCore().processInputQueue();
            rig.scheduler().schedule(); // B starts its load
            rig.connector().remotePrefill("C", 4);
            rig.sendAdd("C", 4, 1);
            rig.engineCore().processInputQueue();
            rig.scheduler().schedule(); // the scan skips B (still loading, holding its block), then C's hit
            assertEquals(1, rig.kvCacheManager().numBlocks("B"));
            assertEquals(RequestStatus.WAITING_FOR_REMOTE_KVS, rig.scheduler().getRequest("C").status(), "C's load started");
        }
    }

    @Nested
    @DisplayName("ABORT_APPLIED_ONCE (suite proposal, #29987 with reused ids)")
    class AbortAppliedOnce {
        /** X@1 and Y decoding, the batch queue full; ABORT(X) and then ADD(X@2) reach the input thread. */
        private EngineCoreRig abortThenReadd(FixSet fixes) {
            EngineCoreRig rig = new EngineCoreRig(fixes, SavePolicy.NEVER, 8);
            rig.sendAdd("Y", 4, 4);
            rig.sendAdd("X", 4, 4);
            rig.runBusyLoopOnce();
            rig.runBusyLoopOnce();
            rig.abortArrives("X");
            rig.sendAdd("X", 4, 4);
            rig.engineCore().processInputSockets();
            rig.engineCore().processInputQueue(); // ABORT(X) finishes X@1, ADD(X@2) adds X@2
            return rig;
        }

        @Test
        void onTheCopyInAbortsQueueIsDroppedWhenTheInputQueueAppliesTheAbort() {
            EngineCoreRig rig = abortThenReadd(ALL);
            rig.engineCore().processAbortsQueue();
            assertEquals(RequestStatus.WAITING, rig.scheduler().getRequest("X").status(), "X@2 untouched");
            assertTrue(rig.violations().isEmpty(), rig.violations().toString());
        }

        @Test
        void onAnAbortDrainedEagerlyFirstStillAppliesOnceFromTheInputQueue() {
            EngineCoreRig rig = new EngineCoreRig(ALL, SavePolicy.NEVER, 8);
            rig.sendAdd("X", 4, 4);
            rig.runBusyLoopOnce();
            Request x1 = rig.track("X");
            rig.abortArrives("X");
            rig.engineCore().processAbortsQueue(); // during the step: X@1 aborted now
            assertEquals(RequestStatus.FINISHED_ABORTED, x1.status());
            rig.engineCore().processInputQueue(); // the input copy: a no-op
            assertTrue(rig.violations().isEmpty(), rig.violations().toString());
        }

        @Test
        void offTheStaleCopyAbortsTheReaddedRequest() {
            EngineCoreRig rig = abortThenReadd(ALL.without(Fix.ABORT_APPLIED_ONCE).without(Fix.UNIQUE_INTERNAL_IDS));
            Request x2 = rig.track("X");
            rig.engineCore().processAbortsQueue();
            assertTrue(rig.has(ViolationKind.ABORT_HIT_WRONG_REQUEST), rig.violations().toString());
            assertEquals(RequestStatus.FINISHED_ABORTED, x2.status(), "the re-added X@2 is the one aborted");
        }
    }

    @Nested
    @DisplayName("second-wave operations: bad input")
    class SecondWaveBadInput {
        @Test
        void aChunkOrLoadThatDoesNotExistIsRefusedAndNothingChanges() {
            EngineCoreRig rig = new EngineCoreRig(ALL, SavePolicy.NEVER, 4);
            String before = rig.progressSignature();
            assertThrows(vllmrace.model.connector.UnknownTransferException.class, () -> rig.connector().chunkWritten("A"));
            assertThrows(vllmrace.model.connector.UnknownTransferException.class, () -> rig.connector().loseLoad("A"));
            assertThrows(NullPointerException.class, () -> rig.connector().chunkBeingWritten(null));
            assertEquals(before, rig.progressSignature());
            rig.runToQuiescence();
            assertTrue(rig.violations().isEmpty(), rig.violations().toString());
        }

        @Test
        void livenessNeedsASettledLoop() {
            EngineCoreRig rig = new EngineCoreRig(ALL, SavePolicy.NEVER, 4);
            assertThrows(IllegalArgumentException.class, () -> rig.scheduler().checkLiveness(0));
            assertTrue(rig.violations().isEmpty());
        }

        @Test
        void aStateThatNeverSettlesIsAModellingErrorNotAVerdict() {
            int[] counter = {0};
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> vllmrace.model.detect.Settle.run(() -> counter[0]++, () -> "step " + counter[0]));
            assertTrue(e.getMessage().contains("no quiescence"), e.getMessage());
            assertEquals(vllmrace.model.detect.Settle.MAX_ITERATIONS, counter[0]);
        }
    }

    @Nested
    @DisplayName("STORE_JOB_BLOCK_REF (#52372)")
    class StoreJobBlockRef {
        /** A pool of 1 block: R runs with a store job emitted; its block goes back without request_finished. */
        private Sched storingThenFreed(FixSet fixes) {
            Sched t = new Sched(fixes, SavePolicy.NEVER);
            t.connector.storeWhileRunning("R");
            t.s.addRequest(new Request("R", 1, 4, 4));
            t.s.schedule();
            t.kv.free("R"); // preemption's kv_cache_manager.free: no request_finished, so no delay
            return t;
        }

        @Test
        void onTheJobsReferenceKeepsTheBlockUntilTheReadThenDropsIt() {
            Sched t = storingThenFreed(ALL);
            assertEquals(1, t.kv.numUsedBlocks(), "the store job still references R's block");
            assertTrue(t.kv.allocateSlots("R2", 8).isEmpty(), "nobody can take it while the job reads it");
            t.connector.completeStore("R");
            assertEquals(0, t.kv.numUsedBlocks(), "the job is done: its reference is dropped");
            assertTrue(t.log.isEmpty(), t.log.toString());
        }

        @Test
        void offTheFreedBlockIsReallocatedAndTheJobStoresForeignKv() {
            Sched t = storingThenFreed(ALL.without(Fix.STORE_JOB_BLOCK_REF));
            assertEquals(0, t.kv.numUsedBlocks());
            assertTrue(t.kv.allocateSlots("R2", 4).isPresent());
            t.connector.completeStore("R");
            assertTrue(t.log.has(ViolationKind.STORE_READ_OF_FREED_BLOCK), t.log.toString());
        }

        @Test
        void aStoreJobThatDoesNotExistIsRefused() {
            Sched t = new Sched(ALL, SavePolicy.NEVER);
            assertThrows(vllmrace.model.connector.UnknownTransferException.class, () -> t.connector.completeStore("R"));
            assertThrows(NullPointerException.class, () -> t.connector.storeWhileRunning(null));
            assertTrue(t.log.isEmpty());
        }
    }

    @Nested
    @DisplayName("DEFER_BLOCK_FREE (#45357)")
    class DeferBlockFree {
        /** R (3 prompt tokens, stop token first) holds the one block; schedule(1) and schedule(2) dispatched. */
        private EngineCoreRig twoStepsInFlight(FixSet fixes) {
            EngineCoreRig rig = new EngineCoreRig(fixes, SavePolicy.NEVER, 1);
            rig.sendAdd("R", 3, 3, 1);
            rig.engineCore().processInputQueue();
            rig.track("R");
            rig.engineCore().scheduleBatch();
            rig.engineCore().scheduleBatch();
            rig.engineCore().processOldestBatch(); // update_from_output(1): R stops, step 2 still in flight
            assertEquals(RequestStatus.FINISHED_STOPPED, rig.request("R").status());
            return rig;
        }

        @Test
        void onTheBookkeepingGoesAtOnceAndTheBlockAfterTheFenceStep() {
            EngineCoreRig rig = twoStepsInFlight(ALL);
            assertNull(rig.scheduler().getRequest("R"), "del requests[R] at once");
            assertTrue(rig.kvCacheManager().getBlockIds("R").isEmpty(), "req_to_blocks popped at once");
            assertEquals(1, rig.kvCacheManager().numUsedBlocks(), "the block waits for step 2's output");
            rig.engineCore().processOldestBatch(); // update_from_output(2): the fence step is processed
            assertEquals(0, rig.kvCacheManager().numUsedBlocks());
            assertTrue(rig.violations().isEmpty(), rig.violations().toString());
        }

        @Test
        void onANormalFinishWithNothingInFlightFreesAtOnce() {
            EngineCoreRig rig = new EngineCoreRig(ALL, SavePolicy.NEVER, 1);
            rig.sendAdd("R", 3, 1);
            rig.runBusyLoopOnce();
            rig.runBusyLoopOnce(); // R finishes by length in update_from_output(1); step 2 scheduled nothing for it
            rig.runBusyLoopOnce();
            assertEquals(0, rig.kvCacheManager().numUsedBlocks());
        }

        @Test
        void offTheBlockGoesBackUnderTheInFlightStep() {
            EngineCoreRig rig = twoStepsInFlight(ALL.without(Fix.DEFER_BLOCK_FREE));
            assertEquals(0, rig.kvCacheManager().numUsedBlocks(), "step 2 can still write a block the pool hands out");
        }
    }

    @Nested
    @DisplayName("STOP_PREEMPTION_AT_FENCED_VICTIM (#49675)")
    class StopPreemptionAtFencedVictim {
        /**
         * A decode-side (consumer) connector, async scheduling, a pool of 3 blocks: A (8 prompt tokens) and B (4) fill it
         * in schedule(1); schedule(2), before update_from_output(1), needs a third block for A's first decode token.
         */
        private EngineCoreRig schedule2NeedsABlock(FixSet fixes) {
            EngineCoreRig rig = new EngineCoreRig(fixes, SavePolicy.NEVER, 3);
            rig.sendAdd("A", 8, 4);
            rig.sendAdd("B", 4, 4);
            rig.admit("A", "B");
            assertFalse(rig.engineCore().scheduleBatch(), "schedule(1) runs A and B; the queue has room");
            assertEquals(0, rig.blockPool().numFreeBlocks());
            rig.engineCore().scheduleBatch(); // schedule(2): A's allocation fails, B (the tail) is the victim, still fenced
            assertTrue(rig.scheduler().defersBlockFrees(), "#45357's gate: two batches, a consumer");
            return rig;
        }

        @Test
        void onAFencedVictimStopsTheRetryAndNothingIsPreempted() {
            EngineCoreRig rig = schedule2NeedsABlock(ALL);
            assertEquals(RequestStatus.RUNNING, rig.request("A").status());
            assertEquals(RequestStatus.RUNNING, rig.request("B").status());
            assertEquals(0, rig.request("A").numPreemptions() + rig.request("B").numPreemptions());
            assertFalse(rig.engineCore().batchQueueSnapshot().get(0).numScheduledTokens().containsKey("A"),
                    "A is not scheduled in step 2; it retries once step 1 is processed");
            rig.runToQuiescence();
            assertTrue(rig.violations().isEmpty(), rig.violations().toString());
            assertEquals(RequestStatus.FINISHED_LENGTH_CAPPED, rig.request("A").status());
            assertEquals(RequestStatus.FINISHED_LENGTH_CAPPED, rig.request("B").status());
            assertTrue(rig.allFreed());
        }

        @Test
        void offTheRetryPreemptsTheFencedVictimAndItselfAndFreesNothing() {
            EngineCoreRig rig = schedule2NeedsABlock(ALL.without(Fix.STOP_PREEMPTION_AT_FENCED_VICTIM));
            assertEquals(RequestStatus.PREEMPTED, rig.request("B").status(), "the victim, its blocks deferred");
            assertEquals(RequestStatus.PREEMPTED, rig.request("A").status(), "then A itself: zero progress (#49674)");
            assertEquals(0, rig.blockPool().numFreeBlocks(), "both preemptions freed nothing now");
            assertEquals(2, rig.scheduler().numDeferredFrees());
        }
    }

    @Nested
    @DisplayName("STALE_OUTPUT_AFTER_PREEMPT (#48245)")
    class StaleOutputAfterPreempt {
        /** R's step 1 (its prefill, one placeholder) is in flight when a harness preempts it; then two schedules. */
        private Scheduler preemptedInFlight(FixSet fixes, ViolationLog log, SchedulerOutput[] steps) {
            KvCacheManager kv = new KvCacheManager(new BlockPool(4, log), 4, log);
            Scheduler s = new Scheduler(fixes, log, kv, new TestAsyncConnector(kv, SavePolicy.NEVER));
            s.addRequest(new Request("R", 1, 4, 3));
            steps[0] = s.schedule();
            assertEquals(1, s.getRequest("R").numOutputPlaceholders());
            s.preemptRequest("R");
            steps[1] = s.schedule(); // before update_from_output(1), as a pipeline deeper than 2 runs it
            return s;
        }

        @Test
        void onTheInFlightOutputIsStaleDeliveredWithoutDrainingThePlaceholdersAndTheResumeWaitsForIt() {
            ViolationLog log = new ViolationLog();
            SchedulerOutput[] steps = new SchedulerOutput[2];
            Scheduler s = preemptedInFlight(ALL, log, steps);
            Request r = s.getRequest("R");
            assertEquals(0, r.numOutputPlaceholders(), "zeroed at preemption");
            assertEquals(4, r.numStaleOutputTokens(), "num_stale_output_tokens = num_in_flight_tokens");
            assertTrue(steps[1].numScheduledTokens().isEmpty(), "deliverable stale output in flight: no resume yet");
            s.updateFromOutput(steps[0], ModelRunnerOutput.execute(steps[0]));
            assertEquals(1, r.numOutputTokens(), "lossless: the stale token is delivered");
            assertEquals(0, r.numStaleOutputTokens());
            assertEquals(0, r.numOutputPlaceholders(), "a stale delivery does not decrement");
            for (int i = 0; i < 4 && !r.isFinished(); i++) {
                SchedulerOutput out = s.schedule();
                s.updateFromOutput(out, ModelRunnerOutput.execute(out));
            }
            assertEquals(RequestStatus.FINISHED_LENGTH_CAPPED, r.status());
            assertEquals(3, r.numOutputTokens());
            assertTrue(log.isEmpty(), log.toString());
        }

        /**
         * scheduler.py@00024d31's is_prefill_chunk counts the output already delivered and the stale placeholder: R
         * resumed with one token delivered and one placeholder left recomputes prompt and output, 5 of 6 tokens, a chunk,
         * so no placeholder is reserved for it.
         */
        @Test
        void offAResumeAfterADeliveredTokenIsAChunkAndReservesNoPlaceholder() {
            ViolationLog log = new ViolationLog();
            KvCacheManager kv = new KvCacheManager(new BlockPool(4, log), 4, log);
            Scheduler s = new Scheduler(ALL.without(Fix.STALE_OUTPUT_AFTER_PREEMPT), log, kv, new TestAsyncConnector(kv, SavePolicy.NEVER));
            s.addRequest(new Request("R", 1, 4, 5));
            SchedulerOutput prefill = s.schedule();
            s.updateFromOutput(prefill, ModelRunnerOutput.execute(prefill));
            Request r = s.getRequest("R");
            assertEquals(1, r.numOutputTokens());
            s.schedule(); // a decode step in flight: one placeholder
            assertEquals(1, r.numOutputPlaceholders());
            s.preemptRequest("R");
            SchedulerOutput resume = s.schedule();
            assertEquals(5, resume.numScheduledTokens().get("R"), "prompt and the delivered token, recomputed");
            assertEquals(1, r.numOutputPlaceholders(), "5 < 4 + 1 + 1: a chunk, no placeholder reserved");
        }

        @Test
        void offThePlaceholderStaysAndAResumeBeforeTheOutputReturnsUnderflowsIt() {
            ViolationLog log = new ViolationLog();
            SchedulerOutput[] steps = new SchedulerOutput[2];
            Scheduler s = preemptedInFlight(ALL.without(Fix.STALE_OUTPUT_AFTER_PREEMPT), log, steps);
            Request r = s.getRequest("R");
            assertEquals(1, r.numOutputPlaceholders(), "scheduler.py@00024d31: _preempt_request leaves it");
            assertEquals(4, steps[1].numScheduledTokens().get("R"), "resumed at once");
            assertEquals(1, r.numOutputPlaceholders(), "is_prefill_chunk (stale placeholder counted): none reserved");
            s.updateFromOutput(steps[0], ModelRunnerOutput.execute(steps[0]));
            assertEquals(0, r.numOutputPlaceholders());
            assertFalse(log.has(ViolationKind.OUTPUT_PLACEHOLDER_UNDERFLOW));
            s.updateFromOutput(steps[1], ModelRunnerOutput.execute(steps[1]));
            assertEquals(-1, r.numOutputPlaceholders());
            assertTrue(log.has(ViolationKind.OUTPUT_PLACEHOLDER_UNDERFLOW), log.toString());
            assertTrue(log.engineDead());
        }
    }

    @Nested
    @DisplayName("REQUIRES_KV_DELIVERY (#50297)")
    class RequiresKvDelivery {
        /** A producer (NIXL prefill side) with a pool of 1: R's only step is in flight when a harness preempts it. */
        private EngineCoreRig preemptedInFinalStep(FixSet fixes) {
            EngineCoreRig rig = new EngineCoreRig(fixes, SavePolicy.ON_SUCCESS, 1);
            rig.sendAdd("R", 4, 1);
            rig.engineCore().processInputQueue();
            SchedulerOutput step = rig.scheduler().schedule();
            rig.track("R");
            rig.scheduler().preemptRequest("R");
            assertEquals(0, rig.kvCacheManager().numBlocks("R"));
            rig.scheduler().updateFromOutput(step, ModelRunnerOutput.execute(step));
            return rig;
        }

        @Test
        void onTheStaleFinalTokenIsDroppedAndRIsRecomputedIntoBlocksItHandsOff() {
            EngineCoreRig rig = preemptedInFinalStep(ALL);
            Request r = rig.request("R");
            assertTrue(r.dropStaleOutput());
            assertEquals(RequestStatus.PREEMPTED, r.status(), "the output was dropped: R stays in waiting");
            assertEquals(0, r.numOutputTokens());
            assertEquals(0, rig.connector().requestFinishedCalls("R"));
            rig.runToQuiescence();
            assertEquals(RequestStatus.FINISHED_LENGTH_CAPPED, r.status());
            assertEquals(1, rig.connector().requestFinishedCalls("R"));
            assertTrue(rig.violations().isEmpty(), rig.violations().toString());
            assertTrue(rig.allFreed(), "handed off, sent, freed");
        }

        @Test
        void onANonProducerDeliversTheStaleOutputLosslessly() {
            EngineCoreRig rig = new EngineCoreRig(ALL, SavePolicy.NEVER, 1); // decode side: requires_kv_delivery False
            rig.sendAdd("R", 4, 1);
            rig.engineCore().processInputQueue();
            SchedulerOutput step = rig.scheduler().schedule();
            rig.track("R");
            rig.scheduler().preemptRequest("R");
            assertFalse(rig.request("R").dropStaleOutput());
            rig.scheduler().updateFromOutput(step, ModelRunnerOutput.execute(step));
            assertEquals(RequestStatus.FINISHED_LENGTH_CAPPED, rig.request("R").status(), "#48245 alone: delivered, finished");
            assertTrue(rig.violations().isEmpty(), "not a producer: no hand-off to check " + rig.violations());
        }

        @Test
        void offRFinishesNormallyAndRequestFinishedGetsNoBlocks() {
            EngineCoreRig rig = preemptedInFinalStep(ALL.without(Fix.REQUIRES_KV_DELIVERY));
            Request r = rig.request("R");
            assertEquals(RequestStatus.FINISHED_LENGTH_CAPPED, r.status());
            assertEquals(1, rig.connector().requestFinishedCalls("R"));
            assertTrue(rig.has(ViolationKind.EMPTY_KV_HANDOFF), rig.violations().toString());
            assertTrue(rig.scheduler().waitingSnapshot().isEmpty(), "stopped_preempted_reqs: removed from waiting");
        }
    }
}
