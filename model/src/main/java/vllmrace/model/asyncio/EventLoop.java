package vllmrace.model.asyncio;

import java.util.Objects;

/**
 * The frontend's asyncio event loop. Python runs one coroutine at a time and switches only at an
 * {@code await}; the model keeps exactly that: every {@link Coroutine} step runs under this loop's lock,
 * so code between two awaits is atomic, and at every await another coroutine (another thread) may run.
 */
public final class EventLoop {
    private final StepLog stepLog;

    public EventLoop(StepLog stepLog) {
        this.stepLog = Objects.requireNonNull(stepLog, "stepLog");
    }

    /** Runs one step (the code between two awaits) of {@code task} atomically with respect to other coroutines. */
    void runStep(String task, String step, Runnable body) {
        synchronized (this) {
            stepLog.record(task, step);
            body.run();
        }
    }

    public StepLog stepLog() {
        return stepLog;
    }
}
