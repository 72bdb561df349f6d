package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import vllmrace.model.VllmInstance;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.fix.FixSet;

/**
 * Bad input to the frontend: each gets a specific exception or a documented no-op, leaves the state as it
 * was, and leaves every invariant true (the detectors stay empty and the system is still quiescent-clean).
 */
class FrontendBadInputTest {
    private VllmInstance vllm;
    private String before;

    @BeforeEach
    void runningRequestX() {
        runningRequestX(FixSet.all());
    }

    private void runningRequestX(FixSet fixes) {
        vllm = new VllmInstance(fixes);
        vllm.asyncLlm().addRequest("X", 4).run().join();
        vllm.engineCore().runBusyLoopOnce();
        vllm.asyncLlm().outputHandler().run().join();
        before = state();
    }

    private String state() {
        return vllm.outputProcessor().requestStatesSnapshot().stream().map(s -> s.requestId() + "@" + s.arrivalTime()).toList()
                + " " + vllm.scheduler().requestsSnapshot() + " " + vllm.inputSocket().peekAll();
    }

    private void assertUnchangedAndInvariantsHold() {
        assertEquals(before, state(), "bad input changed the state");
        vllm.engineCore().processInputQueue();
        vllm.checkQuiescence();
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
    }

    @Test
    void anInstanceNeedsAtLeastOneBlock() {
        assertThrows(IllegalArgumentException.class, () -> new VllmInstance(FixSet.all(), vllmrace.model.connector.TestAsyncConnector.SavePolicy.NEVER, 0));
        VllmInstance one = new VllmInstance(FixSet.all(), vllmrace.model.connector.TestAsyncConnector.SavePolicy.NEVER, 1);
        one.asyncLlm().addRequest("Y", 1).run().join();
        one.engineCore().runBusyLoopOnce();
        one.asyncLlm().outputHandler().run().join();
        one.checkQuiescence();
        assertTrue(one.violations().isEmpty(), one.violations().toString());
    }

    @Test
    void addWithNullOrEmptyIdRaisesBeforeAnyStateChanges() {
        InvalidRequestIdException nullId = assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().addRequest(null, 4));
        assertEquals("AsyncLLM.add_request: request id must be a non-empty string, got null", nullId.getMessage());
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().addRequest("", 4));
        assertThrows(IllegalArgumentException.class, () -> vllm.asyncLlm().addRequest("Y", 0));
        assertThrows(IllegalArgumentException.class, () -> vllm.asyncLlm().addRequest("Y", -3));
        assertUnchangedAndInvariantsHold();
    }

    @Test
    void withoutUniqueInternalIdsAnAddOfARunningIdRaisesAlreadyRunningAndSendsNothing() {
        runningRequestX(FixSet.all().without(vllmrace.model.fix.Fix.UNIQUE_INTERNAL_IDS));
        RuntimeException failure = vllm.asyncLlm().addRequest("X", 4).run().failure();
        assertInstanceOf(RequestAlreadyRunningException.class, failure);
        assertEquals("Request id X already running.", failure.getMessage());
        assertUnchangedAndInvariantsHold();
    }

    @Test
    void withUniqueInternalIdsAnAddUnderARunningExternalIdIsAccepted() {
        vllm.asyncLlm().addRequest("X", 4).run().join(); // #27987: keyed by the internal id X-2
        assertEquals(Map.of("X", List.of("X-1", "X-2")), vllm.outputProcessor().externalReqIdsSnapshot());
        assertEquals(List.of("X-1", "X-2"), vllm.asyncLlm().abort("X").run().join(), "abort by the external id aborts both");
        vllm.engineCore().processInputQueue();
        vllm.checkQuiescence();
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
    }

    @Test
    void abortOfAnUnknownIdIsANoOp() {
        assertEquals(List.of(), vllm.asyncLlm().abort("never-added").run().join());
        assertUnchangedAndInvariantsHold();
    }

    @Test
    void abortWithNullOrEmptyIdRaises() {
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().abort(null));
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().abort(""));
        assertUnchangedAndInvariantsHold();
    }

    @Test
    void doubleAbortSendsOneAbortAndTheSecondIsANoOp() {
        for (FixSet fixes : List.of(FixSet.all(), FixSet.none())) {
            VllmInstance instance = new VllmInstance(fixes);
            instance.asyncLlm().addRequest("X", 4).run().join();
            String internalId = fixes.isOn(vllmrace.model.fix.Fix.UNIQUE_INTERNAL_IDS) ? "X-1" : "X";
            assertEquals(List.of(internalId), instance.asyncLlm().abort("X").run().join());
            assertEquals(List.of(), instance.asyncLlm().abort("X").run().join());
            assertEquals(2, instance.inputSocket().peekAll().size(), "ADD and one ABORT: " + instance.inputSocket().peekAll());
            instance.engineCore().processInputQueue();
            instance.checkQuiescence();
            assertTrue(instance.violations().isEmpty(), instance.violations().toString());
            assertTrue(instance.scheduler().requestsSnapshot().isEmpty());
        }
    }

    @Test
    void outputForAnUnknownIdIsDroppedAsUpstreamDoes() {
        long dropped = vllm.outputProcessor().droppedOutputs();
        vllm.outputProcessor().processOutputs(List.of(new EngineCoreOutput("ghost", 99, 1, null)));
        assertEquals(dropped + 1, vllm.outputProcessor().droppedOutputs());
        assertUnchangedAndInvariantsHold();
    }

    @Test
    void aFinishedRequestDeliversExactlyOneFinalOutput() {
        RequestOutputCollector queue = vllm.asyncLlm().addRequest("Y", 2).run().join();
        for (int i = 0; i < 3; i++) {
            vllm.engineCore().runBusyLoopOnce();
            vllm.asyncLlm().outputHandler().run().join();
        }
        assertTrue(queue.finished());
        assertEquals(1, queue.numFinalOutputs());
        assertEquals("length", queue.finishReason());
    }
}
