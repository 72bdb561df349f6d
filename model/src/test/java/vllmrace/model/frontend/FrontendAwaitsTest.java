package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Await;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.asyncio.YieldCondition;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * Every frontend step boundary cites its upstream await and yield kind: the builder refuses a boundary without one, every
 * coroutine AsyncLLM builds cites only {@link FrontendAwaits}, and a boundary that does not yield joins its steps.
 */
class FrontendAwaitsTest {
    private static final Configuration NO_CONDITION = Configuration.DEFAULT;
    private static final Configuration EVERY_CONDITION = Configuration.DEFAULT.withYields(EnumSet.allOf(YieldCondition.class));

    /** Every coroutine AsyncLLM builds, for both orders of each fix that changes its steps. */
    private static List<Coroutine<?>> everyCoroutine(Configuration config) {
        List<Coroutine<?>> all = new ArrayList<>();
        for (FixSet fixes : List.of(FixSet.all(), FixSet.none())) {
            VllmInstance vllm = new VllmInstance(fixes, config);
            vllm.asyncLlm().addRequest("X", 4).run().join();
            all.add(vllm.asyncLlm().addRequest("Y", 4));
            all.add(vllm.asyncLlm().addRequest("Z", SamplingParams.maxTokens(4).withN(3)));
            all.add(vllm.asyncLlm().abort("X"));
            all.add(vllm.asyncLlm().abort("X", true));
            all.add(vllm.asyncLlm().abortThen("X", "EngineCore busy loop", 2, () -> { }));
            all.add(vllm.asyncLlm().outputHandler());
            all.add(vllm.asyncLlm().addStreamingRequest("S", 1, 2));
            all.add(vllm.asyncLlm().takeOutputs(new RequestOutputCollector(fixes), 2, new ArrayList<>()));
            all.add(vllm.asyncLlm().engineCoreIterations(2, () -> { }));
        }
        return all;
    }

    private static Set<Await> declared() throws IllegalAccessException {
        Set<Await> awaits = new HashSet<>();
        for (Field field : FrontendAwaits.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == Await.class) {
                awaits.add((Await) field.get(null));
            }
        }
        return awaits;
    }

    @Test
    void everyBoundaryOfEveryFrontendCoroutineCitesAFrontendAwait() throws IllegalAccessException {
        Set<Await> declared = declared();
        Set<Await> used = new HashSet<>();
        for (Coroutine<?> coroutine : everyCoroutine(EVERY_CONDITION)) {
            long yielding = coroutine.boundaries().stream().filter(Coroutine.Boundary::yields).count();
            assertEquals(yielding + 1, coroutine.stepCount(), coroutine.task() + ": a step per yielding boundary");
            assertTrue(coroutine.boundaries().stream().allMatch(b -> b.yields() || b.await().kind() == Await.Kind.NEVER),
                    coroutine.task() + ": with every condition holding only a NEVER await joins steps");
            for (Coroutine.Boundary boundary : coroutine.boundaries()) {
                assertTrue(declared.contains(boundary.await()), coroutine.task() + ": " + boundary + " cites no FrontendAwaits constant");
                assertFalse(boundary.await().upstream().isBlank());
                used.add(boundary.await());
            }
        }
        used.add(FrontendAwaits.CLIENT_NEXT_CALL); // scenarios' own compositions (Coroutine.sequence)
        used.add(FrontendAwaits.HANDLER_WAITS_FOR_OUTPUTS);
        assertEquals(declared, used, "every declared await stands at some boundary");
    }

    @Test
    void withNoConditionHoldingOnlyAlwaysAwaitsSplitAFrontendCoroutine() {
        for (Coroutine<?> coroutine : everyCoroutine(NO_CONDITION)) {
            long yielding = coroutine.boundaries().stream().filter(Coroutine.Boundary::yields).count();
            assertTrue(coroutine.boundaries().stream().filter(Coroutine.Boundary::yields)
                    .allMatch(b -> b.await().kind() == Await.Kind.ALWAYS), coroutine.task() + ": " + coroutine.boundaries());
            assertEquals(yielding + 1, coroutine.stepCount(), coroutine.task());
        }
        VllmInstance vllm = new VllmInstance(FixSet.all(), NO_CONDITION);
        Coroutine<RequestOutputCollector> add = vllm.asyncLlm().addRequest("X", SamplingParams.maxTokens(4).withN(2));
        assertEquals(1, add.stepCount());
        assertEquals("OutputProcessor.add_request + EngineCoreClient.add_request_async + OutputProcessor.add_request + "
                + "EngineCoreClient.add_request_async", add.nextStepName(), "the fan-out runs in one step: no await suspends");
    }

    @Test
    void eachConditionSplitsExactlyTheBoundariesThatCiteIt() {
        for (YieldCondition condition : YieldCondition.values()) {
            Configuration config = Configuration.DEFAULT.withYields(EnumSet.of(condition));
            for (Coroutine<?> coroutine : everyCoroutine(config)) {
                for (Coroutine.Boundary boundary : coroutine.boundaries()) {
                    boolean expected = boundary.await().kind() == Await.Kind.ALWAYS || boundary.await().when().contains(condition);
                    assertEquals(expected, boundary.yields(), condition + ", " + coroutine.task() + ": " + boundary);
                }
            }
        }
        assertEquals(Set.of(YieldCondition.OUTPUT_BATCH_OVER_CHUNK), YieldCondition.producedByVllmMain());
        assertEquals(Await.Kind.NEVER, FrontendAwaits.OUTPUTS_TAKEN.kind());
    }

    @Test
    void aJoinedStepThatRaisesStopsBeforeItsSend() {
        VllmInstance vllm = new VllmInstance(FixSet.all().without(Fix.UNIQUE_INTERNAL_IDS), NO_CONDITION);
        vllm.asyncLlm().addRequest("X", 4).run().join();
        vllm.engineCore().processInputQueue();
        Coroutine<RequestOutputCollector> again = vllm.asyncLlm().addRequest("X", 4).run();
        assertInstanceOf(RequestAlreadyRunningException.class, again.failure());
        assertTrue(vllm.inputSocket().isEmpty(), "output_processor.add_request raised: no ADD goes out");
    }

    @Test
    void theBuilderRefusesABoundaryWithoutAnAwaitOnTheFrontendLoop() {
        EventLoop asyncio = EventLoop.asyncio(new StepLog(), Set.of());
        IllegalStateException missing = assertThrows(IllegalStateException.class,
                () -> Coroutine.builder(asyncio, "t").step("a", () -> { }).step("b", () -> { }));
        assertEquals("t: the boundary between 'a' and 'b' cites no upstream await", missing.getMessage());
        assertThrows(IllegalStateException.class, () -> Coroutine.builder(asyncio, "t").await(FrontendAwaits.ADD_SEND),
                "an await before the first step");
        assertThrows(IllegalStateException.class, () -> Coroutine.builder(asyncio, "t").step("a", () -> { })
                .await(FrontendAwaits.ADD_SEND).await(FrontendAwaits.ADD_SEND), "two awaits at one boundary");
        assertThrows(IllegalStateException.class, () -> Coroutine.builder(asyncio, "t").step("a", () -> { })
                .await(FrontendAwaits.ADD_SEND).build(), "an await with no step after it");
        // a process loop's boundaries are another actor's turn and need no await
        Coroutine<Void> process = Coroutine.builder(new EventLoop(new StepLog()), "p").step("a", () -> { }).step("b", () -> { }).build();
        assertEquals(2, process.stepCount());
        assertTrue(process.boundaries().get(0).yields());
    }

    @Test
    void anAwaitIsWellFormed() {
        assertThrows(IllegalArgumentException.class, () -> Await.always(" "));
        assertThrows(IllegalArgumentException.class, () -> new Await("x", Await.Kind.WHEN, Set.of()));
        assertThrows(IllegalArgumentException.class, () -> new Await("x", Await.Kind.NEVER, Set.of(YieldCondition.SEND_BACK_PRESSURE)));
        assertThrows(NullPointerException.class, () -> EventLoop.asyncio(new StepLog(), null));
        assertEquals("when input socket back-pressure | DP FIRST_REQ send blocks", FrontendAwaits.NEXT_CHILD.kindLabel());
    }
}
