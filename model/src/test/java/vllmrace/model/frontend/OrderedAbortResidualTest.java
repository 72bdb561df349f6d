package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * A residual the suite found in #15326's ordered abort (not in the race catalogue): two aborts of one id in
 * flight at once (a client's abort and generate() cancellation) both compute X before either drops it; the
 * first completes, X is re-added, and the second's ABORT, sent late, finishes the NEW request. Frontend
 * ordering alone cannot keep frontend scope ⊇ EngineCore scope (reference §1(d)); unique internal ids (#27987)
 * are the structural fix. This test pins the interleaving on one thread so the finding cannot silently vanish.
 */
class OrderedAbortResidualTest {

    @Test
    void secondConcurrentAbortKillsTheReAddedRequestEvenWithOrderedAbort() {
        FixSet fixes = FixSet.none().with(Fix.ORDERED_ABORT);
        VllmInstance vllm = new VllmInstance(fixes);
        vllm.asyncLlm().addRequest("X", 16).run().join();
        vllm.engineCore().processInputQueue();

        Coroutine<List<String>> first = vllm.asyncLlm().abort("X");
        Coroutine<List<String>> second = vllm.asyncLlm().abort("X");
        first.runNextStep();                        // flatten_req_to_abort: [X]
        second.runNextStep();                       // flatten_req_to_abort: [X] (X is still tracked)
        first.run();                                // ABORT(X@1) on the wire, state dropped
        vllm.asyncLlm().addRequest("X", 16).run().join(); // X@2 accepted, ADD(X@2) on the wire
        second.run();                               // the late ABORT(X) goes out, and drops X@2's state

        vllm.engineCore().processInputQueue();
        assertEquals(List.of(ViolationKind.ABORT_HIT_WRONG_REQUEST),
                vllm.violations().all().stream().map(v -> v.kind()).toList());
        assertTrue(vllm.scheduler().requestsSnapshot().isEmpty(), "X@2 was finished by the late ABORT");
    }
}
