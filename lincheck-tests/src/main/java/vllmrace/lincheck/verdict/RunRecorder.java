package vllmrace.lincheck.verdict;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts model-checking invocations and keeps the step log of the last violating one. Lincheck restores
 * static state it tracks after every invocation, so {@link LincheckRun} tells Lincheck to ignore this
 * class: what it records survives the run.
 */
public final class RunRecorder {
    private static final AtomicLong INVOCATIONS = new AtomicLong();
    private static volatile List<String> violatingSteps = List.of();
    private static volatile List<String> violations = List.of();

    private RunRecorder() {
    }

    public static void countInvocation() {
        INVOCATIONS.incrementAndGet();
    }

    public static void recordViolatingRun(List<String> steps, List<String> detected) {
        violatingSteps = List.copyOf(steps);
        violations = List.copyOf(detected);
    }

    static void reset() {
        INVOCATIONS.set(0);
        violatingSteps = List.of();
        violations = List.of();
    }

    static long invocations() {
        return INVOCATIONS.get();
    }

    static List<String> violatingSteps() {
        return violatingSteps;
    }

    static List<String> violations() {
        return violations;
    }
}
