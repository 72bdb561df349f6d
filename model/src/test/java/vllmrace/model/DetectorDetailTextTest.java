package vllmrace.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;
import vllmrace.model.sched.Scheduler;

/**
 * The words a maintainer reads in a counterexample: each detector's detail and the step log's entries name what the
 * run held, on both sides of each choice in their text (with a connector or without, a request held or not, a
 * transfer report in the step or none).
 */
class DetectorDetailTextTest {

    @Test
    void aSecondFreeRequestWithAConnectorSaysTheConnectorWasAskedTwice() {
        ViolationLog log = new ViolationLog();
        KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
        Scheduler s = new Scheduler(FixSet.all().without(Fix.SKIP_ABORT_OF_FINISHED), log, kv,
                new TestAsyncConnector(kv, TestAsyncConnector.SavePolicy.ALWAYS));
        s.addRequest(new Request("R", 1, 4, 1));
        s.schedule();
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED); // saved: R stays, finished
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        Violation v = log.all().get(0);
        assertEquals(ViolationKind.DOUBLE_FREE_REQUEST, v.kind());
        assertTrue(v.detail().startsWith("_free_request ran 2 times for "), v.detail());
        assertTrue(v.detail().endsWith(", so connector.request_finished did too"), v.detail());
    }

    @Test
    void theStepLogNamesTheTransferReportsOfAStepAndOnlyThen() {
        VllmInstance vllm = new VllmInstance(FixSet.all(), TestAsyncConnector.SavePolicy.ALWAYS, 8);
        vllm.asyncLlm().addRequest("X", 4).run().join();
        vllm.engineCore().runBusyLoopOnce(); // X scheduled, one token
        vllm.asyncLlm().abort("X").run().join();
        vllm.engineCore().runBusyLoopOnce(); // ABORT applied: X's save in flight
        vllm.connector().finishInFlightTransfers();
        vllm.engineCore().step(); // the save's finished_sending comes back in this step's output
        List<String> updates = vllm.stepLog().entries().stream().filter(e -> e.startsWith("EngineCore: update_from_output(")).toList();
        assertEquals("EngineCore: update_from_output(1) [X-1]", updates.get(0), "a step without a transfer report: ids only");
        String last = updates.get(updates.size() - 1);
        assertTrue(last.matches("EngineCore: update_from_output\\(\\d+\\) \\[] KvConnectorOutput.*finishedSending=\\[X-1].*"), last);
    }

    @Test
    void anOrphanedCallerSaysWhatEngineCoreHoldsUnderItsId() {
        VllmInstance gone = new VllmInstance(FixSet.all());
        gone.asyncLlm().addRequest("X", 4).run().join();
        gone.engineCore().processInputQueue();
        gone.scheduler().finishRequests(List.of("X-1"), RequestStatus.FINISHED_ABORTED); // behind the frontend's back
        gone.checkQuiescence();
        assertEquals(List.of("frontend waits on X-1@1 but EngineCore holds nothing under that id"), details(gone));

        VllmInstance lingering = new VllmInstance(FixSet.all(), TestAsyncConnector.SavePolicy.ALWAYS, 8);
        lingering.asyncLlm().addRequest("X", 4).run().join();
        lingering.engineCore().runBusyLoopOnce();
        lingering.asyncLlm().outputHandler().run().join(); // X's first token delivered: nothing in flight
        lingering.scheduler().finishRequests(List.of("X-1"), RequestStatus.FINISHED_ABORTED); // saved: X-1 stays, finished
        lingering.checkQuiescence(); // before the save reports
        String detail = details(lingering).get(0);
        assertTrue(detail.startsWith("frontend waits on X-1@1 but EngineCore holds "), detail);
        assertTrue(!detail.contains("holds nothing") && detail.contains("X-1") && detail.endsWith(" under that id"), detail);
    }

    private static List<String> details(VllmInstance vllm) {
        return vllm.violations().all().stream().filter(v -> v.kind() == ViolationKind.ORPHANED_FRONTEND_REQUEST)
                .map(Violation::detail).toList();
    }
}
