package vllmrace.lincheck.prove;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import vllmrace.model.asyncio.StepGate;

/**
 * Two worker threads of which exactly one runs at a time. A worker runs until it is about to start its operation's
 * next coroutine step (a step boundary, where upstream awaits) or its next operation; there it picks the thread to run
 * next, by the schedule being replayed or, past it, thread 1 first, and records the choice. It goes on itself when it
 * picked itself (no hand-over: most choices are), else hands over a {@link Baton} (a volatile write read by the other),
 * so each segment happens-before the next. The first step of an operation runs with its invocation (the code before it only reads the
 * operations object's own bookkeeping).
 */
final class ControlledThreads implements StepGate.Scheduler, AutoCloseable {
    /** How long one interleaving may take before the check reports an operation that blocks. */
    static final long RUN_TIMEOUT_SECONDS = 30;

    /** What ran in one segment: the thread, its operation (index in its thread) and the steps it began. */
    record Segment(int thread, int op, List<String> steps) {
    }

    /** An operation's end: its result and the segments of its first and last code. */
    record Done(Object result, int start, int end) {
    }

    /** Unwinds a parked worker when the check is closed. */
    private static final class Closed extends RuntimeException {
        Closed() {
            super(null, null, false, false);
        }
    }

    private final Semaphore finished = new Semaphore(0);
    private final Worker[] workers = {new Worker(0), new Worker(1)};
    private final List<Segment> segments = new ArrayList<>();
    private List<Integer> prefix = List.of();
    private List<int[]> choices = new ArrayList<>();
    private Throwable failure;

    ControlledThreads() {
        for (Worker w : workers) {
            w.start();
        }
    }

    final class Worker extends Thread {
        private final int index;
        private final Baton resume = new Baton();
        private volatile boolean closing;
        private List<Call> ops = List.of();
        private Object target;
        private Done[] done = new Done[0];
        private int op;
        private int stepsInOp;
        private int depth;
        private boolean ended = true;

        Worker(int index) {
            super("vllmrace-prove-" + (index + 1));
            this.index = index;
            setDaemon(true);
        }

        @Override
        public void run() {
            while (true) {
                resume.take();
                if (closing) {
                    return;
                }
                try {
                    for (op = 0; op < ops.size(); op++) {
                        if (op > 0) {
                            yieldPoint(this);
                        }
                        stepsInOp = 0;
                        int start = segments.size() - 1;
                        Object result = ops.get(op).invoke(target);
                        done[op] = new Done(result, start, segments.size() - 1);
                    }
                } catch (Closed c) {
                    return;
                } catch (Throwable t) {
                    failure = t;
                }
                ended = true;
                int next = failure == null ? choose() : -1;
                if (next < 0) {
                    finished.release();
                } else {
                    handTo(next);
                }
            }
        }
    }

    /**
     * Runs {@code program}'s two threads over {@code target}, following {@code prefix} (thread indices at each choice)
     * and thread 1 first after it; every choice made, with the threads that could run, goes into {@code made}.
     */
    void run(Program program, Object target, List<Integer> prefix, List<int[]> made) {
        segments.clear();
        this.prefix = prefix;
        this.choices = made;
        failure = null;
        for (Worker w : workers) {
            w.ops = program.thread(w.index);
            w.target = target;
            w.done = new Done[w.ops.size()];
            w.op = 0;
            w.depth = 0;
            w.ended = w.ops.isEmpty();
        }
        int first = choose();
        if (first < 0) {
            return;
        }
        handTo(first);
        try {
            if (!finished.tryAcquire(RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("an interleaving of " + program + " did not end in " + RUN_TIMEOUT_SECONDS
                        + " s: an operation blocks");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (failure != null) {
            throw new IllegalStateException("a worker failed outside an operation: " + failure, failure);
        }
    }

    /** The next thread to run, recorded as a choice; -1 when both ended. */
    private int choose() {
        int mask = (workers[0].ended ? 0 : 1) | (workers[1].ended ? 0 : 2);
        if (mask == 0) {
            return -1;
        }
        int chosen;
        if (choices.size() < prefix.size()) {
            chosen = prefix.get(choices.size());
            if ((mask & (1 << chosen)) == 0) {
                throw new IllegalStateException("replay diverged at choice " + choices.size() + ": the operations are not deterministic");
            }
        } else {
            chosen = (mask & 1) != 0 ? 0 : 1;
        }
        choices.add(new int[] {chosen, mask});
        return chosen;
    }

    private void handTo(int next) {
        segments.add(new Segment(next, workers[next].op, new ArrayList<>()));
        workers[next].resume.pass();
    }

    /** A scheduling point in {@code w}: goes on, or hands over and waits to be resumed. */
    private void yieldPoint(Worker w) {
        int next = choose();
        if (next == w.index) {
            segments.add(new Segment(next, w.op, new ArrayList<>()));
            return;
        }
        handTo(next);
        w.resume.take();
        if (w.closing) {
            throw new Closed();
        }
    }

    Done[] done(int i) {
        return workers[i].done;
    }

    List<Segment> segments() {
        return List.copyOf(segments);
    }

    @Override
    public void beforeStep(String task, String step) {
        if (!(Thread.currentThread() instanceof Worker w) || workers[w.index] != w || w.depth++ > 0) {
            return; // not ours, or a step inside a step: atomic with it
        }
        if (w.stepsInOp++ > 0) {
            yieldPoint(w);
        }
        segments.get(segments.size() - 1).steps().add(task + ": " + step);
    }

    @Override
    public void afterStep() {
        if (Thread.currentThread() instanceof Worker w && workers[w.index] == w) {
            w.depth--;
        }
    }

    @Override
    public void close() {
        for (Worker w : workers) {
            w.closing = true;
            w.resume.pass();
        }
    }
}
