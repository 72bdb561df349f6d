package vllmrace.model.asyncio;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * Where a {@link Coroutine}'s steps run, one at a time. The frontend's asyncio event loop ({@link #asyncio}) runs one
 * coroutine at a time and switches only where an {@code await} really suspends: each step boundary there cites its
 * {@link Await}, and the conditions that hold ({@link YieldCondition}) decide which boundaries yield. The other kind,
 * {@link #EventLoop(StepLog)}, orders the steps of processes and threads (EngineCore's busy loop, a NIXL thread), where
 * every boundary is a point another actor may run. Either way every step runs under this loop's lock, so code between
 * two boundaries is atomic.
 */
public final class EventLoop {
    private final StepLog stepLog;
    private final boolean asyncio;
    private final Set<YieldCondition> holding;

    /** A loop of process and thread steps: every boundary yields, none cites an await. */
    public EventLoop(StepLog stepLog) {
        this(stepLog, false, Set.of());
    }

    private EventLoop(StepLog stepLog, boolean asyncio, Set<YieldCondition> holding) {
        this.stepLog = Objects.requireNonNull(stepLog, "stepLog");
        this.asyncio = asyncio;
        this.holding = holding.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(holding));
    }

    /** The frontend's asyncio loop, {@code holding} the conditions under which its conditional awaits suspend. */
    public static EventLoop asyncio(StepLog stepLog, Set<YieldCondition> holding) {
        Objects.requireNonNull(holding, "holding").forEach(c -> Objects.requireNonNull(c, "condition"));
        return new EventLoop(stepLog, true, holding);
    }

    /** Whether its step boundaries are asyncio awaits, each of which must be cited. */
    public boolean isAsyncio() {
        return asyncio;
    }

    /** The yield conditions that hold on this loop. */
    public Set<YieldCondition> holding() {
        return holding;
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
