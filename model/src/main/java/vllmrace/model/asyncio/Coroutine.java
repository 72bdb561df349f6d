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
 * <p>On the frontend's asyncio loop each boundary between two declared steps cites its upstream {@link Await}; a
 * boundary that does not yield under the loop's {@link YieldCondition}s joins its two steps into one atomic step
 * (named {@code a + b}), so another coroutine can run only where upstream really suspends. {@link #boundaries()} lists
 * the declared boundaries, yielding or not.
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

    /** A declared boundary: the step before it, the await it stands for, the step after it, and whether it yields here. */
    public record Boundary(String before, Await await, String after, boolean yields) {
    }

    private final EventLoop loop;
    private final String task;
    private final List<Step> declared;
    private final List<Await> awaits;
    private final List<Step> steps;
    private final Supplier<T> result;
    private int next;
    private RuntimeException failure;
    private RuntimeException injectedFault;
    private RuntimeException faultAfterLastStep;

    private Coroutine(EventLoop loop, String task, List<Step> declared, List<Await> awaits, Supplier<T> result) {
        this.loop = loop;
        this.task = task;
        this.declared = List.copyOf(declared);
        this.awaits = List.copyOf(awaits);
        this.steps = join(loop, this.declared, this.awaits);
        this.result = result;
    }

    /** The atomic steps: runs of declared steps whose boundaries do not yield, each joined into one. */
    private static List<Step> join(EventLoop loop, List<Step> declared, List<Await> awaits) {
        List<Step> steps = new ArrayList<>();
        List<Step> run = new ArrayList<>();
        for (int i = 0; i < declared.size(); i++) {
            run.add(declared.get(i));
            if (i == declared.size() - 1 || awaits.get(i).yields(loop.holding())) {
                steps.add(run.size() == 1 ? run.get(0) : joined(List.copyOf(run)));
                run.clear();
            }
        }
        return steps;
    }

    private static Step joined(List<Step> run) {
        String name = String.join(" + ", run.stream().map(Step::name).toList());
        return new Step(name, () -> run.forEach(step -> step.body().run())); // a step that raises stops the rest
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
        Step step = steps.get(next);
        StepGate.beforeStep(task, step.name());
        next++;
        try {
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
        } finally {
            StepGate.afterStep();
        }
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
    public static <T> Coroutine<T> sequence(String task, Coroutine<?> first, Await between, Coroutine<T> second) {
        if (first.loop != second.loop || first.next > 0 || second.next > 0) {
            throw new IllegalArgumentException("sequence: two unstarted coroutines of one event loop");
        }
        List<Step> all = new ArrayList<>(first.declared);
        all.addAll(second.declared);
        List<Await> boundaries = new ArrayList<>(first.awaits);
        boundaries.add(Objects.requireNonNull(between, "between"));
        boundaries.addAll(second.awaits);
        return new Coroutine<>(first.loop, task, all, boundaries, second.result);
    }

    /** The declared boundaries in program order, each with whether it yields under the loop's conditions. */
    public List<Boundary> boundaries() {
        List<Boundary> boundaries = new ArrayList<>();
        for (int i = 0; i < awaits.size(); i++) {
            Await await = awaits.get(i);
            boundaries.add(new Boundary(declared.get(i).name(), await, declared.get(i + 1).name(), await.yields(loop.holding())));
        }
        return boundaries;
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

    /**
     * Collects the steps of one coroutine in program order. On an asyncio loop every boundary between two steps is
     * declared with {@link #await(Await)} (a step after a step without one is refused); on a loop of process and thread
     * steps a boundary left undeclared is another actor's turn ({@link Await.Kind#ALWAYS}).
     */
    public static final class Builder {
        /** The boundary of a process or thread loop: another actor may run there. */
        private static final Await PROCESS_BOUNDARY = Await.always("the next step of a process or thread: another actor may run first");
        private final EventLoop loop;
        private final String task;
        private final List<Step> steps = new ArrayList<>();
        private final List<Await> awaits = new ArrayList<>();

        private Builder(EventLoop loop, String task) {
            this.loop = Objects.requireNonNull(loop, "loop");
            this.task = Objects.requireNonNull(task, "task");
        }

        /**
         * Adds the code that runs up to the next boundary.
         *
         * @throws IllegalStateException on an asyncio loop, when the boundary before it cites no await
         */
        public Builder step(String upstreamFunction, Runnable body) {
            Step step = new Step(Objects.requireNonNull(upstreamFunction, "upstreamFunction"), Objects.requireNonNull(body, "body"));
            if (awaits.size() < steps.size()) {
                if (loop.isAsyncio()) {
                    throw new IllegalStateException(task + ": the boundary between '" + steps.get(steps.size() - 1).name()
                            + "' and '" + upstreamFunction + "' cites no upstream await");
                }
                awaits.add(PROCESS_BOUNDARY);
            }
            steps.add(step);
            return this;
        }

        /**
         * Declares the boundary after the last step: the upstream await and whether it yields.
         *
         * @throws IllegalStateException before the first step, or when that boundary is already declared
         */
        public Builder await(Await await) {
            Objects.requireNonNull(await, "await");
            if (steps.isEmpty() || awaits.size() == steps.size()) {
                throw new IllegalStateException(task + ": an await stands between two steps; " + await.upstream()
                        + " follows " + (steps.isEmpty() ? "no step" : "another await"));
            }
            awaits.add(await);
            return this;
        }

        /** @throws IllegalStateException when the last boundary declared has no step after it */
        public <T> Coroutine<T> returning(Supplier<T> result) {
            if (!steps.isEmpty() && awaits.size() == steps.size()) {
                throw new IllegalStateException(task + ": the await " + awaits.get(awaits.size() - 1).upstream() + " has no step after it");
            }
            return new Coroutine<>(loop, task, steps, awaits, result);
        }

        public Coroutine<Void> build() {
            return returning(() -> null);
        }
    }
}
