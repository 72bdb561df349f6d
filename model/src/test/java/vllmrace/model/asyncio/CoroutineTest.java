package vllmrace.model.asyncio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A coroutine runs its steps in program order, one per call, and stops at the step that raises. */
class CoroutineTest {
    private final EventLoop loop = new EventLoop(new StepLog());

    private Coroutine<Void> threeSteps(List<String> ran, RuntimeException second) {
        return Coroutine.builder(loop, "task")
                .step("a", () -> ran.add("a"))
                .step("b", () -> {
                    if (second != null) {
                        throw second;
                    }
                    ran.add("b");
                })
                .step("c", () -> ran.add("c"))
                .build();
    }

    @Test
    void runRunsEveryStepInProgramOrder() {
        List<String> ran = new ArrayList<>();
        Coroutine<Void> task = threeSteps(ran, null).run();
        assertEquals(List.of("a", "b", "c"), ran);
        assertTrue(task.isDone());
        assertFalse(task.runNextStepIfAny(), "a done coroutine runs nothing more");
    }

    @Test
    void runNextStepIfAnyRunsOneStepPerCall() {
        List<String> ran = new ArrayList<>();
        Coroutine<Void> task = threeSteps(ran, null);
        assertTrue(task.runNextStepIfAny());
        assertEquals(List.of("a"), ran);
        assertTrue(task.runNextStepIfAny());
        assertTrue(task.runNextStepIfAny());
        assertEquals(List.of("a", "b", "c"), ran);
        assertFalse(task.runNextStepIfAny());
        assertThrows(IllegalStateException.class, task::runNextStep, "runNextStep on a done coroutine is a caller error");
    }

    @Test
    void aStepThatRaisesEndsTheCoroutine() {
        List<String> ran = new ArrayList<>();
        RuntimeException raised = new IllegalStateException("raised");
        Coroutine<Void> task = threeSteps(ran, raised).run();
        assertEquals(List.of("a"), ran, "steps after the one that raised do not run");
        assertSame(raised, task.failure());
        assertFalse(task.runNextStepIfAny());
        assertSame(raised, assertThrows(IllegalStateException.class, task::join));
    }
}
