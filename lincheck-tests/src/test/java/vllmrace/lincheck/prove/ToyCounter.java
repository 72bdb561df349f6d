package vllmrace.lincheck.prove;

import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.asyncio.StepLog;

/**
 * A toy subject for the bounded-exhaustive checker: a counter whose operations are coroutines on one event loop, so the
 * checker may switch threads between their steps. {@code racyIncrement} reads in one step and writes in the next (a lost
 * update); {@code increment} is one step; {@code slowSet} writes in its second step, so a {@code get} that overlaps it
 * may return the old value and still linearize (before the set).
 */
public class ToyCounter {
    static volatile int limit = Integer.MAX_VALUE;
    private final EventLoop loop = new EventLoop(new StepLog());
    private int value;

    @Operation
    public int racyIncrement() {
        int[] read = new int[1];
        Coroutine.builder(loop, "racyIncrement").step("read", () -> read[0] = value).step("write", () -> value = read[0] + 1)
                .build().run();
        return read[0] + 1;
    }

    @Operation
    public int increment() {
        int[] now = new int[1];
        Coroutine.builder(loop, "increment").step("add", () -> now[0] = ++value).build().run();
        return now[0];
    }

    @Operation
    public void slowSet() {
        Coroutine.builder(loop, "slowSet").step("decide", () -> { }).step("write", () -> value = 7).build().run();
    }

    @Operation
    public int get() {
        int[] now = new int[1];
        Coroutine.builder(loop, "get").step("read", () -> now[0] = value).build().run();
        return now[0];
    }

    @Operation(nonParallelGroup = "owner")
    public void ownerOnly() {
    }

    @Operation
    public int fails() {
        throw new IllegalArgumentException("always");
    }

    @Validate
    public void belowLimit() {
        if (value > limit) {
            throw new IllegalStateException("invariant broken: value " + value + " over " + limit);
        }
    }

    /** The sequential specification. */
    public static class Spec {
        private int value;

        public int racyIncrement() {
            return ++value;
        }

        public int increment() {
            return ++value;
        }

        public void slowSet() {
            value = 7;
        }

        public int get() {
            return value;
        }

        public void ownerOnly() {
        }

        public int fails() {
            throw new IllegalArgumentException("always");
        }
    }
}
