package vllmrace.model.detect;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * The bound of the liveness detectors (LV1 stuck, LV2 leaked): a rig's arbiter runs the environment one busy-loop
 * iteration at a time until {@link #SETTLED_ITERATIONS} iterations in a row leave its progress signature unchanged. A
 * request still unfinished then, or finished and still holding blocks, will stay so: nothing in flight and no pending
 * timer can change it (a running timer is part of the signature). A state still changing after {@link #MAX_ITERATIONS}
 * is a modelling error, never a verdict, unless an upstream assert has killed EngineCore: upstream the busy loop stops at
 * the assert, so the iterations the model runs past it are not vLLM's, and their not settling says nothing.
 */
public final class Settle {
    /** k: iterations in a row that must change nothing. */
    public static final int SETTLED_ITERATIONS = 3;
    /**
     * The bound on the whole drain: three requests sharing a short pool behind a batch queue of 3, with #45357's fenced
     * frees and #49675's stop at a fenced victim, take 33 iterations to drain (hunt seed 20261201, program 7094, every fix
     * on); a livelock (#49674: every fix on but #49675) never drains.
     */
    public static final int MAX_ITERATIONS = 64;

    private Settle() {
    }

    /**
     * Runs {@code iteration} until {@link #SETTLED_ITERATIONS} runs in a row leave {@code signature} unchanged.
     *
     * @return the number of settled iterations (always {@link #SETTLED_ITERATIONS})
     * @throws IllegalStateException if the state still changes after {@link #MAX_ITERATIONS} iterations
     */
    public static int run(Runnable iteration, Supplier<String> signature) {
        return run(iteration, signature, () -> false);
    }

    /**
     * As {@link #run(Runnable, Supplier)}, returning at once when {@code blocked} holds after an iteration: the busy loop
     * then waits on its input queue with nothing in flight, and further iterations would not run at all, so nothing can
     * change (the fixed point needs no counting).
     */
    public static int run(Runnable iteration, Supplier<String> signature, java.util.function.BooleanSupplier blocked) {
        return run(iteration, signature, blocked, () -> false);
    }

    /**
     * As {@link #run(Runnable, Supplier, java.util.function.BooleanSupplier)}; when the state still changes after {@link
     * #MAX_ITERATIONS} but {@code engineDead} holds, returns 0 instead of throwing: EngineCore died at an assert the
     * detectors recorded, and the drain past it is not upstream's (the caller then checks no liveness).
     */
    public static int run(Runnable iteration, Supplier<String> signature, java.util.function.BooleanSupplier blocked,
                          java.util.function.BooleanSupplier engineDead) {
        Objects.requireNonNull(iteration, "iteration");
        String last = signature.get();
        int settled = 0;
        for (int i = 0; i < MAX_ITERATIONS && settled < SETTLED_ITERATIONS; i++) {
            iteration.run();
            if (blocked.getAsBoolean()) {
                return SETTLED_ITERATIONS;
            }
            String now = signature.get();
            settled = now.equals(last) ? settled + 1 : 0;
            last = now;
        }
        if (settled < SETTLED_ITERATIONS && engineDead.getAsBoolean()) {
            return 0;
        }
        if (settled < SETTLED_ITERATIONS) {
            throw new IllegalStateException("no quiescence: the state still changes after " + MAX_ITERATIONS
                    + " busy-loop iterations (last: " + last + ")");
        }
        return settled;
    }
}
