package vllmrace.lincheck.verdict;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a model-checking run did, invocation by invocation: how many, the distinct step sequences they ran, each
 * outcome's count and the first invocation that ended in it, and the last one (the failing one, when Lincheck stops at
 * a failure). Lincheck restores static state it tracks after every invocation, so
 * {@link LincheckRun} tells Lincheck to ignore this class: what it records survives the run.
 */
public final class RunRecorder {
    /**
     * One invocation as the model saw it: its number, steps, detector findings (and the invariants they break), outcome
     * and an unexpected actor failure.
     */
    public record Run(long invocation, List<String> steps, List<String> violations, Set<String> invariants, String outcome,
                      String actorFailure) {
    }

    private static final AtomicLong INVOCATIONS = new AtomicLong();
    private static final Set<List<String>> DISTINCT_RUNS = ConcurrentHashMap.newKeySet();
    private static final Map<String, Long> OUTCOMES = new ConcurrentHashMap<>();
    private static volatile long lastNewRunAt;
    private static final Map<String, Run> FIRST_BY_OUTCOME = new ConcurrentHashMap<>();
    private static final List<Run> RUNS = new java.util.concurrent.CopyOnWriteArrayList<>();
    private static volatile Run last;
    private static volatile boolean stopped;

    private RunRecorder() {
    }

    public static void countInvocation() {
        INVOCATIONS.incrementAndGet();
    }

    /**
     * One invocation's model steps after the set-up (actors and arbiter), and the name of what its arbiter judged
     * (whether that is a violation is decided after the check: it reads annotations by reflection, which Lincheck
     * would see as non-determinism inside a tracked operation). True when no earlier invocation ran these steps.
     */
    public static boolean recordRun(List<String> steps, List<String> violations, Set<String> invariants, String outcome,
                                    String actorFailure) {
        Run run = new Run(INVOCATIONS.get(), List.copyOf(steps), List.copyOf(violations), Set.copyOf(invariants), outcome, actorFailure);
        RUNS.add(run);
        boolean added = DISTINCT_RUNS.add(run.steps());
        if (added) {
            lastNewRunAt = run.invocation();
        }
        OUTCOMES.merge(outcome, 1L, Long::sum);
        FIRST_BY_OUTCOME.putIfAbsent(outcome, run);
        last = run;
        return added;
    }

    static void reset() {
        INVOCATIONS.set(0);
        DISTINCT_RUNS.clear();
        OUTCOMES.clear();
        lastNewRunAt = 0;
        FIRST_BY_OUTCOME.clear();
        RUNS.clear();
        last = null;
        stopped = false;
    }

    /** The invocation that ran the last step sequence not seen before (later ones only repeated earlier ones). */
    static long lastNewRunAt() {
        return lastNewRunAt;
    }

    static int distinctRuns() {
        return DISTINCT_RUNS.size();
    }

    static long invocations() {
        return INVOCATIONS.get();
    }

    /** Outcome name → invocations that ended in it. */
    static Map<String, Long> outcomes() {
        return Map.copyOf(OUTCOMES);
    }

    /** The suite stopped the run: every distinct step sequence ran, or an invocation was a modelling error. */
    static void stopExploring() {
        stopped = true;
    }

    static boolean stoppedExploring() {
        return stopped;
    }

    static Run last() {
        return last;
    }

    /** Every invocation recorded, in order. */
    static List<Run> runs() {
        return List.copyOf(RUNS);
    }

    /** The first invocation that ended in each outcome. */
    static Map<String, Run> firstByOutcome() {
        return Map.copyOf(FIRST_BY_OUTCOME);
    }
}
