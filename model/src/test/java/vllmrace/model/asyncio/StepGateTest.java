package vllmrace.model.asyncio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StepGateTest {
    private final EventLoop loop = new EventLoop(new StepLog());

    @Test
    void anInstalledSchedulerIsCalledBeforeEveryStepAndNeverAfterUninstall() {
        List<String> seen = new ArrayList<>();
        Coroutine<Void> task = Coroutine.builder(loop, "t").step("a", () -> seen.add("a")).step("b", () -> seen.add("b")).build();
        StepGate.Scheduler gate = new StepGate.Scheduler() {
            @Override
            public void beforeStep(String task, String step) {
                seen.add("before " + task + ": " + step);
            }

            @Override
            public void afterStep() {
                seen.add("after");
            }
        };
        StepGate.install(gate);
        try {
            task.runNextStep();
        } finally {
            StepGate.uninstall(gate);
        }
        task.runNextStep();
        assertEquals(List.of("before t: a", "a", "after", "b"), seen);
    }

    @Test
    void aSecondSchedulerOrNoneIsRefusedAndLeavesTheFirstInstalled() {
        List<String> seen = new ArrayList<>();
        StepGate.Scheduler first = recording(seen, "first");
        StepGate.install(first);
        try {
            assertThrows(IllegalStateException.class, () -> StepGate.install(recording(seen, "second")));
            assertThrows(IllegalArgumentException.class, () -> StepGate.install(null));
            StepGate.uninstall(recording(seen, "other")); // not the installed one: no effect
            Coroutine.builder(loop, "t").step("a", () -> seen.add("a")).build().run();
        } finally {
            StepGate.uninstall(first);
        }
        assertEquals(List.of("first", "a"), seen);
    }

    private static StepGate.Scheduler recording(List<String> seen, String name) {
        return new StepGate.Scheduler() {
            @Override
            public void beforeStep(String task, String step) {
                seen.add(name);
            }

            @Override
            public void afterStep() {
            }
        };
    }
}
