package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.VllmInstance;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.Request;

/**
 * Streaming-input sessions (#28973) end to end, and the collector's merge (#53861): a chunk ends with a finish reason on
 * an output that is not final, the session runs on, and only the last chunk's finish is final. Without
 * {@link Fix#COLLECTOR_KEEPS_BOUNDARIES} a put merges into the waiting output and erases its boundary.
 */
class StreamingInputTest {

    private static List<RequestOutputCollector.Output> runSession(VllmInstance vllm, RequestOutputCollector queue, boolean takeEachTurn) {
        List<RequestOutputCollector.Output> taken = new ArrayList<>();
        for (int i = 0; i < 6 && !queue.finished(); i++) {
            vllm.engineCore().runBusyLoopOnce();
            if (takeEachTurn || i % 2 == 1) {
                vllm.asyncLlm().outputHandler().run();
                for (var out = queue.getNowait(); out != null; out = queue.getNowait()) {
                    taken.add(out);
                }
            }
        }
        vllm.asyncLlm().outputHandler().run();
        for (var out = queue.getNowait(); out != null; out = queue.getNowait()) {
            taken.add(out);
        }
        return taken;
    }

    @Test
    void aSessionRunsOnAfterAChunkBoundaryAndEndsAfterItsLastChunk() {
        VllmInstance vllm = new VllmInstance(FixSet.none());
        RequestOutputCollector queue = vllm.asyncLlm().addStreamingRequest("X", 1, 2).run().join();
        List<RequestOutputCollector.Output> taken = runSession(vllm, queue, true);
        assertEquals(List.of(new RequestOutputCollector.Output(1, "length", false), new RequestOutputCollector.Output(1, null, false),
                new RequestOutputCollector.Output(1, "length", true)), taken, "a boundary, c2's first token, the final output");
        assertEquals(1, queue.boundariesPut());
        assertEquals(1, queue.boundariesTaken());
        assertEquals(1, queue.numFinalOutputs());
        vllm.engineCore().processInputQueue();
        vllm.checkCollector(queue);
        vllm.checkQuiescence();
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
        assertTrue(vllm.scheduler().requestsSnapshot().isEmpty(), "the session finished after its last chunk");
    }

    @Test
    void whenTheProducerRunsAheadTheMergeErasesTheBoundaryUnlessTheFixKeepsIt() {
        for (FixSet fixes : List.of(FixSet.none(), FixSet.none().with(Fix.COLLECTOR_KEEPS_BOUNDARIES))) {
            VllmInstance vllm = new VllmInstance(fixes);
            RequestOutputCollector queue = vllm.asyncLlm().addStreamingRequest("X", 1, 2).run().join();
            runSession(vllm, queue, false); // two iterations per output-handler pass: the boundary and c2's first token together
            boolean keeps = fixes.isOn(Fix.COLLECTOR_KEEPS_BOUNDARIES);
            assertEquals(keeps ? 0 : 1, queue.boundariesErased(), fixes.toString());
            assertEquals(keeps ? 1 : 0, queue.boundariesTaken(), fixes.toString());
            vllm.checkCollector(queue);
            assertEquals(keeps ? List.of() : List.of(ViolationKind.CHUNK_BOUNDARY_LOST),
                    vllm.violations().all().stream().map(v -> v.kind()).toList());
        }
    }

    @Test
    void theCollectorMergesLikeRequestOutputAddAndTheDequeNeverMergesIntoAReason() {
        RequestOutputCollector merging = new RequestOutputCollector(FixSet.none());
        merging.put(1, null, false);
        merging.put(2, null, false);
        assertEquals(1, merging.waiting(), "two plain outputs merge into one slot (DELTA)");
        merging.put(1, "length", false);
        merging.put(1, null, false);
        assertEquals(new RequestOutputCollector.Output(5, null, false), merging.getNowait());
        assertEquals(1, merging.boundariesErased());
        assertNull(merging.getNowait());
        RequestOutputCollector deque = new RequestOutputCollector(FixSet.none().with(Fix.COLLECTOR_KEEPS_BOUNDARIES));
        deque.put(1, null, false);
        deque.put(1, "length", false);
        deque.put(1, null, false);
        deque.put(1, "length", true);
        deque.put(0, "abort", true);
        assertEquals(new RequestOutputCollector.Output(2, "length", false), deque.getNowait(), "merges up to and with a boundary");
        assertEquals(new RequestOutputCollector.Output(2, "length", true), deque.getNowait(), "a plain output takes the final one in");
        assertEquals(new RequestOutputCollector.Output(0, "abort", true), deque.getNowait(), "never merges into a finished entry");
        assertEquals(0, deque.boundariesErased());
        assertEquals(1, deque.boundariesTaken());
    }

    @Test
    void theSessionsRequestIsNumberedAndBoundLikeAnyAdd() {
        VllmInstance vllm = new VllmInstance(FixSet.all());
        vllm.asyncLlm().addRequest("Y", 4).run().join();
        RequestOutputCollector queue = vllm.asyncLlm().addStreamingRequest("X", 1, 2).run().join();
        assertEquals("X-2", queue.requestId(), "q.request_id: the session's internal id");
        vllm.engineCore().processInputQueue();
        long y = vllm.scheduler().getRequest("Y-1").arrivalTime();
        assertEquals(y + 1, vllm.scheduler().getRequest("X-2").arrivalTime(), "the session's ADD is the next arrival");
    }

    @Test
    void generateTakesEachWaitingOutputOncePerStep() {
        VllmInstance vllm = new VllmInstance(FixSet.all());
        RequestOutputCollector queue = vllm.asyncLlm().addStreamingRequest("X", 1, 2).run().join();
        List<RequestOutputCollector.Output> taken = new ArrayList<>();
        var take = vllm.asyncLlm().takeOutputs(queue, 2, taken);
        assertEquals(2, take.stepCount(), "one step per take");
        take.runNextStep(); // nothing waits yet: nothing taken
        assertEquals(List.of(), taken);
        vllm.engineCore().runBusyLoopOnce();
        vllm.asyncLlm().outputHandler().run();
        take.runNextStep();
        assertEquals(List.of(new RequestOutputCollector.Output(1, "length", false)), taken);
        assertEquals(3, vllm.asyncLlm().engineCoreIterations(3, () -> { }).stepCount(), "one step per iteration");
    }

    @Test
    void badInputIsRefusedBeforeAnyStateChanges() {
        VllmInstance vllm = new VllmInstance(FixSet.all());
        assertEquals("AsyncLLM.add_request: a streaming session has at least two chunks, each of at least one token, got [3]",
                assertThrows(IllegalArgumentException.class, () -> vllm.asyncLlm().addStreamingRequest("X", 3)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> vllm.asyncLlm().addStreamingRequest("X", (int[]) null))
                .getMessage().endsWith("got null"));
        assertThrows(IllegalArgumentException.class, () -> new Request("X", 1, 1).queueChunks(List.of(0)), "a budget of 0");
        assertThrows(IllegalArgumentException.class, () -> vllm.asyncLlm().addStreamingRequest("X", 1, 0));
        assertThrows(IllegalArgumentException.class, () -> vllm.asyncLlm().addStreamingRequest("X", (int[]) null));
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().addStreamingRequest("", 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new EngineCoreRequest("X", 1, 0, 1, 0, List.of(0)));
        assertThrows(IllegalArgumentException.class, () -> new Request("X", 1, 1).queueChunks(List.of(-1)));
        assertThrows(IllegalArgumentException.class, () -> new vllmrace.model.engine.EngineCoreOutput("X", 1, 1, null, true));
        assertThrows(IllegalArgumentException.class, () -> vllm.asyncLlm().takeOutputs(new RequestOutputCollector(), 0, new ArrayList<>()));
        assertThrows(IllegalArgumentException.class, () -> vllm.asyncLlm().engineCoreIterations(0, () -> { }));
        assertTrue(vllm.outputProcessor().requestStatesSnapshot().isEmpty());
        assertTrue(vllm.inputSocket().isEmpty());
        assertTrue(vllm.scheduler().requestsSnapshot().isEmpty());
    }
}
