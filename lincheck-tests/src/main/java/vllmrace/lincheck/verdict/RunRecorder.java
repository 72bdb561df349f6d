package vllmrace.lincheck.verdict;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts model-checking invocations and the distinct step sequences they ran, and keeps the last one's step log,
 * detector findings and outcome. Lincheck restores
 * static state it tracks after every invocation, so {@link LincheckRun} tells Lincheck to ignore this
 * class: what it records survives the run.
 */
public final class RunRecorder {
    private static final AtomicLong INVOCATIONS = new AtomicLong();
    private static volatile List<String> lastSteps = List.of();
    private static volatile List<String> lastViolations = List.of();
    private static volatile String lastOutcome;
    private static final Set<List<String>> DISTINCT_RUNS = ConcurrentHashMap.newKeySet();
    private static volatile long lastNewRunAt;

    private RunRecorder() {
    }

    public static void countInvocation() {
        INVOCATIONS.incrementAndGet();
    }

    /** One invocation's model steps after the set-up (actors and arbiter): distinct ones = step interleavings seen. */
    public static void recordRun(List<String> steps, List<String> detected, String outcome) {
        if (DISTINCT_RUNS.add(List.copyOf(steps))) {
            lastNewRunAt = INVOCATIONS.get();
        }
        lastSteps = List.copyOf(steps);
        lastViolations = List.copyOf(detected);
        lastOutcome = outcome;
    }

    /** The invocation that ran the last step sequence not seen before (later ones only repeated earlier ones). */
    static long lastNewRunAt() {
        return lastNewRunAt;
    }


    static void reset() {
        INVOCATIONS.set(0);
        lastSteps = List.of();
        lastViolations = List.of();
        lastOutcome = null;
        DISTINCT_RUNS.clear();
        lastNewRunAt = 0;
    }

    static int distinctRuns() {
        return DISTINCT_RUNS.size();
    }

    static long invocations() {
        return INVOCATIONS.get();
    }

    /** The model steps of the last invocation (after a failure: the failing one, which Lincheck stops at). */
    static List<String> lastSteps() {
        return lastSteps;
    }

    /** What the detectors recorded in the last invocation. */
    static List<String> lastViolations() {
        return lastViolations;
    }

    /** The outcome the last invocation's arbiter returned, or null. */
    static String lastOutcome() {
        return lastOutcome;
    }
}
