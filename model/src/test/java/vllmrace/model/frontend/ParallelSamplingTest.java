package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import vllmrace.model.VllmInstance;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.Request;

/**
 * Parallel sampling ({@code n > 1}) through the whole connected model: a {@link ParentRequest} with children
 * {@code "{idx}_{parent}"}, abort of the parent aborting every child in EngineCore, and FE4 (no ParentRequest left
 * behind, #51629) after an abort by external id, by internal child id, and after a normal finish. Run with and
 * without unique internal ids (#27987).
 */
class ParallelSamplingTest {

    private static VllmInstance instance(boolean unique) {
        FixSet fixes = unique ? FixSet.all() : FixSet.all().without(Fix.UNIQUE_INTERNAL_IDS);
        return new VllmInstance(fixes);
    }

    private static String parentId(boolean unique) {
        return unique ? "P-1" : "P";
    }

    private static List<String> engineIds(VllmInstance vllm) {
        return vllm.scheduler().requestsSnapshot().stream().filter(r -> !r.isFinished()).map(Request::requestId).toList();
    }

    private static void assertQuiescentAndClean(VllmInstance vllm) {
        vllm.engineCore().processInputQueue();
        vllm.asyncLlm().outputHandler().run().join();
        vllm.checkQuiescence();
        assertTrue(vllm.violations().isEmpty(), vllm.violations().toString());
    }

    @ParameterizedTest(name = "unique internal ids: {0}")
    @ValueSource(booleans = {false, true})
    void addSendsOneAddPerChildAndTracksTheParent(boolean unique) {
        VllmInstance vllm = instance(unique);
        RequestOutputCollector queue = vllm.asyncLlm().addRequest("P", new SamplingParams(2, 4, 0)).run().join();
        vllm.engineCore().processInputQueue();
        String p = parentId(unique);
        assertEquals(List.of("0_" + p, "1_" + p), engineIds(vllm));
        assertEquals(Map.of("P", List.of("0_" + p, "1_" + p)), vllm.outputProcessor().externalReqIdsSnapshot());
        assertEquals(List.of(p), List.copyOf(vllm.outputProcessor().parentRequestsSnapshot().keySet()));
        assertEquals(0, queue.numFinalOutputs());
        assertQuiescentAndClean(vllm);
    }

    @ParameterizedTest(name = "unique internal ids: {0}")
    @ValueSource(booleans = {false, true})
    void abortByExternalIdAbortsEveryChildInTheEngineAndLeavesNoParentBehind(boolean unique) {
        VllmInstance vllm = instance(unique);
        RequestOutputCollector queue = vllm.asyncLlm().addRequest("P", new SamplingParams(2, 8, 0)).run().join();
        vllm.engineCore().runBusyLoopOnce();
        vllm.asyncLlm().outputHandler().run().join();
        String p = parentId(unique);
        assertEquals(List.of("0_" + p, "1_" + p), vllm.asyncLlm().abort("P").run().join());
        vllm.engineCore().processInputQueue();
        assertEquals(List.of(), engineIds(vllm), "both children aborted in EngineCore");
        assertEquals(Map.of(), vllm.outputProcessor().parentRequestsSnapshot(), "FE4 (#51629): no ParentRequest left behind");
        assertEquals(Map.of(), vllm.outputProcessor().externalReqIdsSnapshot());
        assertEquals(1, queue.numFinalOutputs(), "the shared collector gets one final output");
        assertEquals(OutputProcessor.FINISH_REASON_ABORT, queue.finishReason());
        assertQuiescentAndClean(vllm);
    }

    /** Upstream (#51629 open): the children's abort by external id pops their states and leaves the parent (FE4). */
    @ParameterizedTest(name = "unique internal ids: {0}")
    @ValueSource(booleans = {false, true})
    void withoutTheFixAnAbortByExternalIdLeavesTheParentBehind(boolean unique) {
        FixSet fixes = (unique ? FixSet.all() : FixSet.all().without(Fix.UNIQUE_INTERNAL_IDS)).without(Fix.PARENT_RELEASED_ON_ABORT);
        VllmInstance vllm = new VllmInstance(fixes);
        RequestOutputCollector queue = vllm.asyncLlm().addRequest("P", new SamplingParams(2, 8, 0)).run().join();
        String p = parentId(unique);
        assertEquals(List.of("0_" + p, "1_" + p), vllm.asyncLlm().abort("P").run().join());
        assertEquals(List.of(p), List.copyOf(vllm.outputProcessor().parentRequestsSnapshot().keySet()), "the parent stays");
        assertEquals(1, queue.numFinalOutputs(), "the caller still gets its final output");
        vllm.engineCore().processInputQueue();
        vllm.checkQuiescence();
        assertEquals(List.of(vllmrace.model.detect.ViolationKind.LEAKED_PARENT_REQUEST),
                vllm.violations().all().stream().map(v -> v.kind()).toList());
    }

    /**
     * Upstream's elif branch: {@code generate()}'s cancellation, {@code abort(q.request_id, internal=True)}, names the
     * parent's own internal id and releases it, fix or not, with either abort order.
     */
    @ParameterizedTest(name = "ordered abort: {0}")
    @ValueSource(booleans = {false, true})
    void withoutTheFixAnInternalAbortByTheParentsOwnIdReleasesIt(boolean ordered) {
        FixSet fixes = FixSet.all().without(Fix.PARENT_RELEASED_ON_ABORT);
        VllmInstance vllm = new VllmInstance(ordered ? fixes : fixes.without(Fix.ORDERED_ABORT));
        vllm.asyncLlm().addRequest("P", new SamplingParams(2, 8, 0)).run().join();
        assertEquals(List.of("0_P-1", "1_P-1"), vllm.asyncLlm().abort("P-1", true).run().join());
        assertEquals(Map.of(), vllm.outputProcessor().parentRequestsSnapshot());
        assertQuiescentAndClean(vllm);
    }

    @ParameterizedTest(name = "unique internal ids: {0}")
    @ValueSource(booleans = {false, true})
    void abortOfOneChildByInternalIdKeepsTheParentUntilItsLastChild(boolean unique) {
        VllmInstance vllm = instance(unique);
        RequestOutputCollector queue = vllm.asyncLlm().addRequest("P", new SamplingParams(2, 8, 0)).run().join();
        String p = parentId(unique);
        assertEquals(List.of("0_" + p), vllm.asyncLlm().abort("0_" + p).run().join());
        assertEquals(List.of(p), List.copyOf(vllm.outputProcessor().parentRequestsSnapshot().keySet()));
        assertEquals(0, queue.numFinalOutputs(), "the parent is not finished while a child runs");
        assertEquals(List.of("1_" + p), vllm.asyncLlm().abort(p).run().join(), "the parent id resolves to its live child");
        assertEquals(Map.of(), vllm.outputProcessor().parentRequestsSnapshot());
        assertEquals(1, queue.numFinalOutputs());
        assertQuiescentAndClean(vllm);
    }

    @ParameterizedTest(name = "unique internal ids: {0}")
    @ValueSource(booleans = {false, true})
    void bothChildrenFinishingDeliverOneFinalOutputAndDropTheParent(boolean unique) {
        VllmInstance vllm = instance(unique);
        RequestOutputCollector queue = vllm.asyncLlm().addRequest("P", new SamplingParams(3, 2, 0)).run().join();
        for (int i = 0; i < 3; i++) {
            vllm.engineCore().runBusyLoopOnce();
            vllm.asyncLlm().outputHandler().run().join();
        }
        assertEquals(1, queue.numFinalOutputs());
        assertEquals("length", queue.finishReason());
        assertEquals(Map.of(), vllm.outputProcessor().parentRequestsSnapshot());
        assertTrue(vllm.outputProcessor().requestStatesSnapshot().isEmpty());
        assertQuiescentAndClean(vllm);
    }

    @ParameterizedTest(name = "unique internal ids: {0}")
    @ValueSource(booleans = {false, true})
    void badInputToParallelSamplingRaisesAndChangesNothing(boolean unique) {
        VllmInstance vllm = instance(unique);
        vllm.asyncLlm().addRequest("P", new SamplingParams(2, 4, 0)).run().join();
        String before = vllm.outputProcessor().externalReqIdsSnapshot() + " " + vllm.outputProcessor().parentRequestsSnapshot()
                + " " + vllm.inputSocket().peekAll();
        assertThrows(IllegalArgumentException.class, () -> new SamplingParams(0, 4, 0), "n < 1");
        assertThrows(NullPointerException.class, () -> vllm.asyncLlm().addRequest("Q", (SamplingParams) null));
        assertThrows(InvalidRequestIdException.class, () -> vllm.asyncLlm().addRequest("", new SamplingParams(2, 4, 0)));
        if (!unique) { // the children's internal ids 0_P, 1_P are taken; with #27987 a re-add gets new ones
            assertInstanceOf(RequestAlreadyRunningException.class,
                    vllm.asyncLlm().addRequest("P", new SamplingParams(2, 4, 0)).run().failure(), "duplicate add of a running parent");
        }
        assertEquals(List.of(), vllm.asyncLlm().abort("unknown").run().join());
        String after = vllm.outputProcessor().externalReqIdsSnapshot() + " " + vllm.outputProcessor().parentRequestsSnapshot()
                + " " + vllm.inputSocket().peekAll();
        assertEquals(before, after, "state unchanged");
        vllm.asyncLlm().abort("P").run().join();
        assertEquals(List.of(), vllm.asyncLlm().abort("P").run().join(), "double abort: no-op");
        assertQuiescentAndClean(vllm);
    }
}
