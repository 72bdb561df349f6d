package vllmrace.lincheck.verdict;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts model-checking invocations and the distinct step sequences they ran, and keeps the step log of the last
 * violating one. Lincheck restores
 * static state it tracks after every invocation, so {@link LincheckRun} tells Lincheck to ignore this
 * class: what it records survives the run.
 */
public final class RunRecorder {
    private static final AtomicLong INVOCATIONS = new AtomicLong();
    private static volatile List<String> violatingSteps = List.of();
    private static volatile List<String> violations = List.of();
    private static final Set<List<String>> DISTINCT_RUNS = ConcurrentHashMap.newKeySet();
    private static volatile long lastNewRunAt;

    private RunRecorder() {
    }

    public static void countInvocation() {
        INVOCATIONS.incrementAndGet();
    }

    /** One invocation's model steps after the set-up (actors and arbiter): distinct ones = step interleavings seen. */
    public static void recordRun(List<String> steps) {
        if (DISTINCT_RUNS.add(List.copyOf(steps))) {
            lastNewRunAt = INVOCATIONS.get();
        }
    }

    /** The invocation that ran the last step sequence not seen before (later ones only repeated earlier ones). */
    static long lastNewRunAt() {
        return lastNewRunAt;
    }

    public static void recordViolatingRun(List<String> steps, List<String> detected) {
        violatingSteps = List.copyOf(steps);
        violations = List.copyOf(detected);
    }

    static void reset() {
        INVOCATIONS.set(0);
        violatingSteps = List.of();
        violations = List.of();
        DISTINCT_RUNS.clear();
        lastNewRunAt = 0;
    }

    static int distinctRuns() {
        return DISTINCT_RUNS.size();
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
