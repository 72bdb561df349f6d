package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * Stop strings, detected only in {@code process_outputs}: the request goes to {@code reqs_to_abort}, its caller gets
 * exactly one final {@code stop} output, and EngineCore is told to abort it; with {@link Fix#ORDERED_FINISH_ABORT}
 * the state stays (rejecting a re-add, dropping further outputs) until the ABORT is on the wire.
 */
class StopStringTest {

    @Test
    void processOutputsFinishesAStopStringRequestAndReturnsItToAbort() {
        OutputProcessor op = new OutputProcessor();
        RequestOutputCollector queue = new RequestOutputCollector();
        op.addRequest(new EngineCoreRequest("X", 1, 16), "X", null, 0, queue, 2);
        Map<String, Long> targets = new HashMap<>();
        assertEquals(List.of(), op.processOutputs(List.of(new EngineCoreOutput("X", 1, 1, null)), targets, true));
        assertEquals(1, queue.numOutputs(), "the first token reached the caller");
        assertEquals(List.of("X"), op.processOutputs(List.of(new EngineCoreOutput("X", 1, 1, null)), targets, true));
        assertEquals(Map.of("X", 1L), targets);
        assertNull(op.getRequestState("X"), "as upstream: dropped at once");
        assertEquals(1, queue.numFinalOutputs());
        assertEquals(OutputProcessor.FINISH_REASON_STOP, queue.finishReason());
    }

    @Test
    void theOneArgumentFormReturnsReqsToAbortToo() {
        OutputProcessor op = new OutputProcessor();
        op.addRequest(new EngineCoreRequest("X", 1, 16), "X", null, 0, new RequestOutputCollector(), 1);
        assertEquals(List.of("X"), op.processOutputs(List.of(new EngineCoreOutput("X", 1, 1, null))));
    }

    @Test
    void anEngineFinishIsNotAbortedAgain() {
        OutputProcessor op = new OutputProcessor();
        RequestOutputCollector queue = new RequestOutputCollector();
        op.addRequest(new EngineCoreRequest("X", 1, 16), "X", null, 0, queue, 1);
        assertEquals(List.of(), op.processOutputs(List.of(new EngineCoreOutput("X", 1, 1, "length"))),
                "EngineCore finished it itself: nothing to abort");
        assertEquals("length", queue.finishReason());
    }

    @Test
    void orderedFinishKeepsTheStateUntilFinishRequestsAndDropsLaterOutputs() {
        OutputProcessor op = new OutputProcessor();
        RequestOutputCollector queue = new RequestOutputCollector();
        op.addRequest(new EngineCoreRequest("X", 1, 16), "X", null, 0, queue, 1);
        assertEquals(List.of("X"), op.processOutputs(List.of(new EngineCoreOutput("X", 1, 1, null)), new HashMap<>(), false));
        assertTrue(op.getRequestState("X").finishedInFrontend());
        assertEquals(1, queue.numOutputs(), "its tokens reach the caller now; the final stop output waits for the ABORT");
        assertThrows(RequestAlreadyRunningException.class,
                () -> op.addRequest(new EngineCoreRequest("X", 2, 16), "X", null, 0, new RequestOutputCollector(), 0),
                "without unique internal ids a re-add is rejected until the ABORT is sent");
        long dropped = op.droppedOutputs();
        op.processOutputs(List.of(new EngineCoreOutput("X", 1, 1, null)), new HashMap<>(), false);
        assertEquals(dropped + 1, op.droppedOutputs(), "outputs after the stop string are dropped");
        assertEquals(0, queue.numFinalOutputs());
        op.finishRequests(List.of("X"));
        assertNull(op.getRequestState("X"));
        assertEquals(1, queue.numFinalOutputs());
        assertEquals(OutputProcessor.FINISH_REASON_STOP, queue.finishReason());
        op.finishRequests(List.of("X", "unknown"));
        assertEquals(1, queue.numFinalOutputs(), "finishing again, or an unknown id: no-op");
    }

    @Test
    void aClientAbortDuringTheOrderedFinishGivesOneFinalOutput() {
        // a batch over 128 outputs: the handler's asyncio.sleep(0) between process_outputs and the ABORT send
        VllmInstance vllm = new VllmInstance(FixSet.all().without(Fix.UNIQUE_INTERNAL_IDS), vllmrace.model.deploy.Configuration.DEFAULT
                .withYields(java.util.EnumSet.of(vllmrace.model.asyncio.YieldCondition.OUTPUT_BATCH_OVER_CHUNK)));
        RequestOutputCollector queue = vllm.asyncLlm().addRequest("X", new SamplingParams(1, 16, 1)).run().join();
        vllm.engineCore().runBusyLoopOnce();
        Coroutine<Integer> handler = vllm.asyncLlm().outputHandler();
        handler.runNextStep(); // get_output_async + process_outputs: stop string found, X kept, ABORT not yet sent
        assertInstanceOf(RequestAlreadyRunningException.class, vllm.asyncLlm().addRequest("X", 16).run().failure());
        assertEquals(List.of("X"), vllm.asyncLlm().abort("X").run().join());
        handler.run();
        assertEquals(1, queue.numFinalOutputs(), "exactly one final output (FE3)");
        vllm.engineCore().processInputQueue();
        vllm.asyncLlm().outputHandler().run().join();
        vllm.checkQuiescence();
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
        assertTrue(vllm.scheduler().requestsSnapshot().isEmpty());
    }

    @Test
    void endToEndTheStopStringRequestIsAbortedInEngineCoreBothWays() {
        for (FixSet fixes : List.of(FixSet.all(), FixSet.none())) {
            VllmInstance vllm = new VllmInstance(fixes);
            RequestOutputCollector queue = vllm.asyncLlm().addRequest("X", new SamplingParams(1, 16, 2)).run().join();
            for (int i = 0; i < 3; i++) {
                vllm.engineCore().runBusyLoopOnce();
                vllm.asyncLlm().outputHandler().run().join();
            }
            vllm.engineCore().processInputQueue();
            assertTrue(vllm.scheduler().requestsSnapshot().isEmpty(), fixes + ": EngineCore aborted X");
            assertEquals(1, queue.numFinalOutputs());
            assertEquals(OutputProcessor.FINISH_REASON_STOP, queue.finishReason());
            vllm.checkQuiescence();
            assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
        }
    }

    @Test
    void badInputToTheNewOperationsRaises() {
        OutputProcessor op = new OutputProcessor();
        RequestOutputCollector queue = new RequestOutputCollector();
        assertThrows(IllegalArgumentException.class, () -> op.addRequest(new EngineCoreRequest("X", 1, 16), "X", null, 0, queue, -1));
        assertThrows(InvalidRequestIdException.class, () -> op.addRequest(new EngineCoreRequest("X", 1, 16), "", null, 0, queue, 0));
        assertThrows(NullPointerException.class, () -> op.addRequest(new EngineCoreRequest("X", 1, 16), "X", null, 0, null, 0));
        assertThrows(NullPointerException.class, () -> op.processOutputs(null));
        assertThrows(NullPointerException.class, () -> op.finishRequests(null));
        assertTrue(op.requestStatesSnapshot().isEmpty(), "state unchanged");
        op.addRequest(new EngineCoreRequest("X", 1, 16), "X", null, 0, queue, 0);
        assertThrows(RequestAlreadyRunningException.class,
                () -> op.addRequest(new EngineCoreRequest("X", 2, 16), "X", null, 0, new RequestOutputCollector(), 0));
        assertEquals(1, op.requestStatesSnapshot().size());
        assertEquals(1, op.requestStatesSnapshot().get(0).arrivalTime(), "the running request is untouched");
    }
}
