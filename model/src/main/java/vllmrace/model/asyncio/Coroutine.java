package vllmrace.model.asyncio;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * One upstream {@code async def} as the list of its atomic steps: step k is the code between await k-1
 * and await k. A thread drives it with {@link #run()} (JCStress actor, Lincheck thread); a replay drives it
 * one step at a time with {@link #runNextStep()}, in the order a counterexample dictates.
 *
 * <p>A step that throws ends the coroutine (later steps do not run), as a raised exception ends an
 * upstream coroutine; the caller reads it with {@link #failure()}.
 *
 * @param <T> what the coroutine returns
 */
public final class Coroutine<T> {

    /** The code between two awaits. */
    public record Step(String name, Runnable body) {
    }

    private final EventLoop loop;
    private final String task;
    private final List<Step> steps;
    private final Supplier<T> result;
    private int next;
    private RuntimeException failure;
    private RuntimeException injectedFault;
    private RuntimeException faultAfterLastStep;

    private Coroutine(EventLoop loop, String task, List<Step> steps, Supplier<T> result) {
        this.loop = loop;
        this.task = task;
        this.steps = List.copyOf(steps);
        this.result = result;
    }

    public static Builder builder(EventLoop loop, String task) {
        return new Builder(loop, task);
    }

    /** Runs every remaining step; other coroutines may interleave at each await. */
    public Coroutine<T> run() {
        // recursion, not a loop: Lincheck counts a loop iteration as a switch point besides the (atomic) step call, and
        // explored many interleavings per step order (README, Toolchain notes); the depth is the step count
        if (runNextStepIfAny()) {
            run();
        }
        return this;
    }

    /** Runs the next step if there is one; false when the coroutine is done (nothing ran). */
    public boolean runNextStepIfAny() {
        if (isDone()) {
            return false;
        }
        runNextStep();
        return true;
    }

    /** Runs exactly one step (the replay's unit). */
    public void runNextStep() {
        if (isDone()) {
            throw new IllegalStateException(task + " has no step left to run");
        }
        Step step = steps.get(next++);
        loop.runStep(task, step.name(), () -> {
            try {
                if (injectedFault != null) {
                    throw injectedFault;
                }
                step.body().run();
                if (faultAfterLastStep != null && next == steps.size()) {
                    throw faultAfterLastStep;
                }
            } catch (RuntimeException e) {
                failure = e;
            }
        });
    }

    /**
     * Harness self-tests only: the next step raises {@code fault} instead of running, as a broken model would. Shows
     * that every engine reports such a run as a modelling error, never as the race.
     */
    public void injectFault(RuntimeException fault) {
        synchronized (loop) {
            injectedFault = Objects.requireNonNull(fault, "fault");
        }
    }

    /** Harness self-tests only: every step runs, then the last one raises {@code fault}, its work done. */
    public void injectFaultAfterLastStep(RuntimeException fault) {
        synchronized (loop) {
            faultAfterLastStep = Objects.requireNonNull(fault, "fault");
        }
    }

    /**
     * Scenario composition: one task that awaits {@code first}, then {@code second} (neither started), as one
     * {@code async def} awaiting two coroutines in turn; a step that raises ends the whole task. Both must run on
     * {@code loop}.
     */
    public static <T> Coroutine<T> sequence(String task, Coroutine<?> first, Coroutine<T> second) {
        if (first.loop != second.loop || first.next > 0 || second.next > 0) {
            throw new IllegalArgumentException("sequence: two unstarted coroutines of one event loop");
        }
        List<Step> all = new ArrayList<>(first.steps);
        all.addAll(second.steps);
        return new Coroutine<>(first.loop, task, all, second.result);
    }

    public boolean isDone() {
        synchronized (loop) {
            return failure != null || next >= steps.size();
        }
    }

    /** The name of the step {@link #runNextStep()} would run next. */
    public String nextStepName() {
        synchronized (loop) {
            return isDone() ? null : steps.get(next).name();
        }
    }

    /** How many steps the coroutine has in all (it may end earlier, if a step raises). */
    public int stepCount() {
        return steps.size();
    }

    public String task() {
        return task;
    }

    /** What the coroutine raised, or null. */
    public RuntimeException failure() {
        synchronized (loop) {
            return failure;
        }
    }

    /** The coroutine's return value; rethrows what it raised. */
    public T join() {
        synchronized (loop) {
            if (!isDone()) {
                throw new IllegalStateException(task + " has not finished");
            }
            if (failure != null) {
                throw failure;
            }
            return result.get();
        }
    }

    /** Collects the steps of one coroutine in program order. */
    public static final class Builder {
        private final EventLoop loop;
        private final String task;
        private final List<Step> steps = new ArrayList<>();

        private Builder(EventLoop loop, String task) {
            this.loop = Objects.requireNonNull(loop, "loop");
            this.task = Objects.requireNonNull(task, "task");
        }

        /** Adds the code that runs up to the next {@code await}. */
        public Builder step(String upstreamFunction, Runnable body) {
            steps.add(new Step(upstreamFunction, body));
            return this;
        }

        public <T> Coroutine<T> returning(Supplier<T> result) {
            return new Coroutine<>(loop, task, steps, result);
        }

        public Coroutine<Void> build() {
            return new Coroutine<>(loop, task, steps, () -> null);
        }
    }
}
