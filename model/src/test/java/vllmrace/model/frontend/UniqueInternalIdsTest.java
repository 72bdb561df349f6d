package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.Request;

/**
 * {@link Fix#UNIQUE_INTERNAL_IDS} (#27987): EngineCore sees {@code external-N} (a deterministic per-instance counter
 * stands for upstream's 8 random characters), {@code external_req_ids} maps external to internal ids, abort by
 * external id resolves to them; bad input raises or is a documented no-op and leaves the state unchanged.
 */
class UniqueInternalIdsTest {

    private static VllmInstance unique() {
        return new VllmInstance(FixSet.all());
    }

    private static String state(VllmInstance vllm) {
        return vllm.outputProcessor().requestStatesSnapshot() + " " + vllm.outputProcessor().externalReqIdsSnapshot() + " "
                + vllm.scheduler().requestsSnapshot() + " " + vllm.inputSocket().peekAll();
    }

    @Test
    void internalIdsAreExternalPlusACounterSuffixAndTheMapResolvesThem() {
        VllmInstance vllm = unique();
        vllm.asyncLlm().addRequest("X", 8).run().join();
        vllm.asyncLlm().addRequest("Y", 8).run().join();
        vllm.engineCore().processInputQueue();
        assertEquals(List.of("X-1", "Y-2"), vllm.scheduler().requestsSnapshot().stream().map(Request::requestId).toList());
        assertEquals(Map.of("X", List.of("X-1"), "Y", List.of("Y-2")), vllm.outputProcessor().externalReqIdsSnapshot());
        assertEquals("X", vllm.outputProcessor().getRequestState("X-1").externalReqId());

        assertEquals(List.of("X-1"), vllm.asyncLlm().abort("X").run().join(), "abort by external id");
        assertEquals(List.of("Y-2"), vllm.asyncLlm().abort("Y-2").run().join(), "abort by internal id");
        vllm.engineCore().processInputQueue();
        assertTrue(vllm.scheduler().requestsSnapshot().isEmpty());
        assertEquals(Map.of(), vllm.outputProcessor().externalReqIdsSnapshot());

        vllm.asyncLlm().addRequest("X", 8).run().join();
        vllm.engineCore().processInputQueue();
        assertEquals(List.of("X-3"), vllm.scheduler().requestsSnapshot().stream().map(Request::requestId).toList(),
                "a re-added id is a new internal id");
        vllm.checkQuiescence();
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
    }

    @Test
    void withoutTheSwitchInternalIdsAreTheExternalOnes() {
        VllmInstance vllm = new VllmInstance(FixSet.all().without(Fix.UNIQUE_INTERNAL_IDS));
        vllm.asyncLlm().addRequest("X", 8).run().join();
        vllm.engineCore().processInputQueue();
        assertEquals(List.of("X"), vllm.scheduler().requestsSnapshot().stream().map(Request::requestId).toList());
        assertEquals(Map.of("X", List.of("X")), vllm.outputProcessor().externalReqIdsSnapshot());
    }

    @Test
    void badInputRaisesOrIsANoOpAndChangesNothing() {
        VllmInstance vllm = unique();
        vllm.asyncLlm().addRequest("X", 8).run().join();
        vllm.engineCore().processInputQueue();
        String before = state(vllm);
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().addRequest(null, 8));
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().addRequest("", 8));
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().abort(null));
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().abort(""));
        assertThrows(InvalidRequestIdException.class, () -> vllm.outputProcessor().abortRequests(java.util.Arrays.asList("X", null)));
        assertThrows(InvalidRequestIdException.class, () -> vllm.outputProcessor().flattenReqToAbort(List.of("")));
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().abortThen("", "next", 1, () -> { }));
        assertEquals(vllm.asyncLlm().abort("X").stepCount() + 1, vllm.asyncLlm().abortThen("X", "next", 1, () -> { }).stepCount(),
                "abort then one more step (none run yet)");
        IllegalArgumentException never = assertThrows(IllegalArgumentException.class,
                () -> vllm.asyncLlm().abortThen("X", "next", 0, () -> { }));
        assertEquals("abortThen: times must be at least 1, got 0", never.getMessage());
        assertEquals(List.of(), vllm.asyncLlm().abort("unknown").run().join(), "unknown id: no-op");
        assertEquals(List.of(), vllm.asyncLlm().abort("X-99").run().join(), "unknown internal id: no-op");
        assertEquals(before, state(vllm), "state unchanged");
        assertEquals(List.of("X-1"), vllm.asyncLlm().abort("X").run().join());
        assertEquals(List.of(), vllm.asyncLlm().abort("X").run().join(), "double abort: no-op");
        assertEquals(List.of(), vllm.asyncLlm().abort("X-1").run().join(), "double abort by internal id: no-op");
        vllm.engineCore().processInputQueue();
        vllm.checkQuiescence();
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
    }

    @Test
    void theOrderedAbortResidualIsClosedByUniqueIds() {
        // OrderedAbortResidualTest's interleaving (two concurrent aborts of X, then a re-add) with unique ids:
        // the late second ABORT names X-1 only, so X@2 survives.
        VllmInstance vllm = new VllmInstance(FixSet.none().with(Fix.ORDERED_ABORT).with(Fix.UNIQUE_INTERNAL_IDS));
        vllm.asyncLlm().addRequest("X", 16).run().join();
        vllm.engineCore().processInputQueue();
        Coroutine<List<String>> first = vllm.asyncLlm().abort("X");
        Coroutine<List<String>> second = vllm.asyncLlm().abort("X");
        first.runNextStep();
        second.runNextStep();
        first.run();
        vllm.asyncLlm().addRequest("X", 16).run().join();
        second.run();
        vllm.engineCore().processInputQueue();
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
        assertEquals(List.of("X-2"), vllm.scheduler().requestsSnapshot().stream().map(Request::requestId).toList());
        vllm.checkQuiescence();
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
    }
}
