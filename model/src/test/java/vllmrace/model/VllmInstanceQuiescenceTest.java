package vllmrace.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * {@link VllmInstance#checkQuiescence()} is the one check every engine's arbiter calls: besides the frontend's detectors
 * it must run the scheduler's quiescence detectors and LV2 at a blocked busy loop. Each test sets up a state where only
 * the scheduler's side has something to say, so the instance's check is silent unless it delegates.
 */
class VllmInstanceQuiescenceTest {
    /**
     * SC5: without the #32255 review's refinement, X's free is delayed behind a load whose finished_recving already
     * arrived (AbortedLoadLeak): no report will release it.
     */
    @Test
    void itRunsTheSchedulersQuiescenceDetectors() {
        VllmInstance vllm = new VllmInstance(FixSet.all().without(Fix.DELAY_FREE_UNLESS_RECVED), SavePolicy.NEVER, 8);
        vllm.connector().remotePrefill("X-1", 4);
        vllm.asyncLlm().addRequest("X", 4).run().join();
        vllm.engineCore().runBusyLoopOnce(); // X-1 allocated, its load started: WAITING_FOR_REMOTE_KVS
        vllm.connector().completeLoad("X-1");
        vllm.engineCore().runBusyLoopOnce(); // finished_recving(X-1) arrives; X-1 is promoted at the next schedule()
        vllm.asyncLlm().abort("X").run().join();
        vllm.engineCore().runBusyLoopOnce(); // ABORT applied first: its free is delayed behind the load already reported
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
        vllm.checkQuiescence();
        assertEquals(List.of(ViolationKind.DELAY_FREED_NEVER_RELEASED, ViolationKind.BLOCK_LEAK), kinds(vllm),
                "SC5, then the block it holds for no live request");
    }

    /** LV2: without #43433 has_requests() ignores the delay-freed X-1, so the busy loop blocks with it still held. */
    @Test
    void itRunsTheBlockedLoopCheck() {
        VllmInstance vllm = new VllmInstance(FixSet.all().without(Fix.HAS_REQUESTS_COUNTS_DELAY_FREED), SavePolicy.ALWAYS, 8);
        vllm.asyncLlm().addRequest("X", 4).run().join();
        vllm.engineCore().runBusyLoopOnce(); // X-1 scheduled, one token
        vllm.asyncLlm().outputHandler().run().join();
        vllm.asyncLlm().abort("X").run().join();
        vllm.engineCore().runBusyLoopOnce(); // ABORT applied: X-1's save in flight, its blocks delay-freed
        vllm.connector().finishInFlightTransfers(); // the save lands; no step will poll it
        assertTrue(vllm.engineCore().isIdle());
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
        vllm.checkQuiescence();
        assertEquals(List.of(ViolationKind.REQUEST_LEAKED), kinds(vllm));
    }

    private static List<ViolationKind> kinds(VllmInstance vllm) {
        return vllm.violations().all().stream().map(Violation::kind).toList();
    }
}
