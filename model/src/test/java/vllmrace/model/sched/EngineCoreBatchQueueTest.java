package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.scheduler.EngineCoreRig;

/**
 * EngineCore with async scheduling: {@code step_with_batch_queue} runs schedule(N+1) before
 * update_from_output(N); an ABORT goes to {@code aborts_queue} too (#29987) and is applied right before the
 * update; everything runs to quiescence with nothing left over.
 */
class EngineCoreBatchQueueTest {

    private static List<String> engineSteps(EngineCoreRig rig) {
        return rig.stepLog().entries().stream().filter(e -> e.startsWith("EngineCore: schedule") || e.startsWith("EngineCore: update"))
                .map(e -> e.substring("EngineCore: ".length()).replaceAll(" KvConnectorOutput.*", "")).toList();
    }

    @Test
    void scheduleOfTheNextStepRunsBeforeTheUpdateOfThePreviousOne() {
        EngineCoreRig rig = new EngineCoreRig(FixSet.all(), SavePolicy.NEVER, 8);
        rig.sendAdd("R", 4, 3);
        for (int i = 0; i < 4; i++) {
            rig.runBusyLoopOnce();
        }
        assertEquals(List.of("schedule(1) [R]", "schedule(2) [R]", "update_from_output(1) [R]", "schedule(3) [R]",
                "update_from_output(2) [R]", "schedule(4) []", "update_from_output(3) [R]"), engineSteps(rig));
        assertEquals("length", rig.finishReasons("R"));
        rig.runToQuiescence();
        assertTrue(rig.allFreed());
        assertTrue(rig.violations().isEmpty(), rig.violations().toString());
    }

    @Test
    void eagerAbortsApplyAQueuedAbortRightBeforeTheUpdate() {
        EngineCoreRig rig = new EngineCoreRig(FixSet.all(), SavePolicy.ON_SUCCESS, 8);
        rig.sendAdd("R", 4, 1);
        rig.runBusyLoopOnce(); // schedule(1) runs R's final step
        rig.track("R");
        rig.engineCore().processInputQueue();
        assertTrue(rig.engineCore().scheduleBatch());
        rig.atomically("client", "ABORT", () -> rig.abortArrives("R"));
        rig.engineCore().processOldestBatch();
        rig.collectOutputs();
        assertEquals(RequestStatus.FINISHED_ABORTED, rig.request("R").status());
        assertEquals(null, rig.finishReasons("R"), "no success output for the aborted request");
        rig.runToQuiescence();
        assertTrue(rig.allFreed());
        assertTrue(rig.violations().isEmpty(), rig.violations().toString());
    }

    @Test
    void withoutEagerAbortsTheQueuedAbortIsOvertaken() {
        EngineCoreRig rig = new EngineCoreRig(FixSet.all().without(Fix.EAGER_ABORTS), SavePolicy.ON_SUCCESS, 8);
        rig.sendAdd("R", 4, 1);
        rig.runBusyLoopOnce();
        rig.engineCore().processInputQueue();
        rig.engineCore().scheduleBatch();
        rig.atomically("client", "ABORT", () -> rig.abortArrives("R"));
        rig.engineCore().processOldestBatch();
        rig.collectOutputs();
        assertEquals("length", rig.finishReasons("R"));
        assertTrue(rig.has(vllmrace.model.detect.ViolationKind.ABORT_OVERTAKEN_BY_COMPLETION));
    }

    @Test
    void theFrontendEngineStepsSynchronouslyWithoutAnAbortsQueue() {
        vllmrace.model.VllmInstance vllm = new vllmrace.model.VllmInstance(FixSet.all());
        vllm.asyncLlm().addRequest("X", 2).run().join();
        vllm.engineCore().runBusyLoopOnce();
        assertEquals(1, vllm.scheduler().requestsSnapshot().get(0).numOutputTokens(), "schedule and update in one iteration");
        assertTrue(vllm.engineCore().batchQueueSnapshot().isEmpty());
    }

    @Test
    void idleOnlyWhenEveryQueueIsEmpty() {
        // upstream's aborts_queue keeps the copy of an ABORT the input queue applied (the suite's ABORT_APPLIED_ONCE drops it)
        EngineCoreRig rig = new EngineCoreRig(FixSet.all().without(vllmrace.model.fix.Fix.ABORT_APPLIED_ONCE), SavePolicy.NEVER, 8);
        assertTrue(rig.engineCore().isIdle());
        assertEquals(false, rig.engineCore().scheduleBatch(), "nothing to schedule, nothing in flight: do not block");
        rig.sendAdd("R", 4, 2);
        assertEquals(false, rig.engineCore().isIdle(), "an ADD on the input socket");
        rig.engineCore().processInputSockets();
        assertEquals(false, rig.engineCore().isIdle(), "an ADD in input_queue");
        rig.engineCore().processInputQueue();
        assertTrue(rig.engineCore().isIdle(), "R is the scheduler's now; the queues are empty");
        rig.engineCore().scheduleBatch();
        assertEquals(false, rig.engineCore().isIdle(), "a step in the batch queue");
        rig.engineCore().processOldestBatch();
        assertTrue(rig.engineCore().isIdle());
        rig.atomically("client", "ABORT", () -> rig.abortArrives("R"));
        rig.engineCore().processInputQueue();
        assertEquals(false, rig.engineCore().isIdle(), "the ABORT's copy in aborts_queue");
        rig.engineCore().processAbortsQueue();
        assertTrue(rig.engineCore().isIdle());
        assertTrue(rig.stepLog().entries().stream().anyMatch(e -> e.startsWith("EngineCore: _process_aborts_queue(")),
                "the counterexample shows the eager abort: " + rig.stepLog().entries());
    }
}
