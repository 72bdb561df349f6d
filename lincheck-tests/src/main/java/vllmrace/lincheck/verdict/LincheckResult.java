package vllmrace.lincheck.verdict;

import java.util.List;
import java.util.Map;

/**
 * What one Lincheck model check produced. {@code invocations} is counted by the model itself (one per test
 * instance Lincheck built for an interleaving); when it stays below {@code budget} with no failure, Lincheck
 * stopped because it had no further interleaving of this scenario to try.
 *
 * @param failed       Lincheck reported a failure (invalid results, or a failed {@code @Validate})
 * @param report       Lincheck's own failure report, up to (not including) its detailed trace; empty if none
 * @param detailedReport Lincheck's full failure report, detailed trace included
 * @param steps        the model's step log of the violating interleaving (empty if none was recorded)
 * @param violations   what the model's detectors recorded in that interleaving
 * @param coverage     for a race scenario, the step interleavings among the invocations ({@link Coverage#UNKNOWN} otherwise)
 * @param outcomes     for a race scenario, invocations per judged outcome name (empty otherwise)
 * @param firstByOutcome for a race scenario, the first invocation that ended in each outcome
 * @param last         the last invocation recorded (Lincheck stops at a failing one), or null
 * @param runs         for a race scenario, every invocation recorded, in order
 */
public record LincheckResult(String check, boolean failed, long invocations, int budget, long wallMillis,
                             String report, String detailedReport, List<String> steps, List<String> violations,
                             Coverage coverage, Map<String, Long> outcomes, Map<String, RunRecorder.Run> firstByOutcome,
                             RunRecorder.Run last, List<RunRecorder.Run> runs) {

    /**
     * Step-level coverage of a race scenario: how many distinct step sequences (actor steps, then the arbiter's) the
     * invocations ran, of how many the scenario has (every schedule run directly), and the invocation that ran the
     * last new one.
     */
    public record Coverage(int seen, int total, long lastNewAt) {
        /** Not measured (checks that are not a race scenario). */
        public static final Coverage UNKNOWN = new Coverage(-1, -1, -1);

        public boolean known() {
            return total > 0;
        }

        /** Every step sequence of the scenario was among those Lincheck explored. */
        public boolean complete() {
            return known() && seen == total;
        }

        @Override
        public String toString() {
            return seen + " of the scenario's " + total + " distinct step sequences among them"
                    + (complete() ? " (all seen by invocation " + lastNewAt + ")" : "");
        }
    }

    /** The same result with the counterexample's model steps and detector findings. */
    /**
     * One passing result for several passing runs of one check (its set-ups): their invocations and wall times summed.
     * "all Lincheck generated" (invocations below budget) may be claimed only if each run stopped below its budget, so
     * with some runs exhausted and some not, the budget is the invocations explored.
     */
    public static LincheckResult allPassed(String check, List<LincheckResult> runs) {
        if (runs.stream().anyMatch(LincheckResult::failed)) {
            throw new IllegalArgumentException(check + ": a failed run is reported on its own, not combined");
        }
        long invocations = runs.stream().mapToLong(LincheckResult::invocations).sum();
        long wallMillis = runs.stream().mapToLong(LincheckResult::wallMillis).sum();
        boolean mixed = runs.stream().anyMatch(LincheckResult::exhausted) && !runs.stream().allMatch(LincheckResult::exhausted);
        int total = mixed ? (int) invocations : runs.stream().mapToInt(LincheckResult::budget).sum();
        return new LincheckResult(check, false, invocations, total, wallMillis, "", "", List.of(), List.of(), Coverage.UNKNOWN,
                java.util.Map.of(), java.util.Map.of(), null, List.of());
    }

    public LincheckResult withSteps(List<String> counterexampleSteps, List<String> detected) {
        return new LincheckResult(check, failed, invocations, budget, wallMillis, report, detailedReport,
                List.copyOf(counterexampleSteps), List.copyOf(detected), coverage, outcomes, firstByOutcome, last, runs);
    }

    /** The same result, not failed: the suite stopped Lincheck (every distinct step sequence ran, or a modelling error). */
    public LincheckResult stoppedByTheSuite() {
        return new LincheckResult(check, false, invocations, budget, wallMillis, "", "", steps, violations, coverage,
                outcomes, firstByOutcome, last, runs);
    }

    /** The same result with its step-level coverage. */
    public LincheckResult withCoverage(Coverage measured) {
        return new LincheckResult(check, failed, invocations, budget, wallMillis, report, detailedReport, steps, violations,
                measured, outcomes, firstByOutcome, last, runs);
    }

    /** True when Lincheck ran out of interleavings before the budget (only meaningful without a failure). */
    public boolean exhausted() {
        return !failed && invocations < budget;
    }

    /**
     * True when a run that did not fail stopped at its budget with step sequences of the scenario not yet among its
     * invocations: a bounded exploration, never "all interleavings".
     */
    public boolean bounded() {
        return !failed && !exhausted() && !(coverage().complete() && invocations < budget);
    }

    /** How to word the figures without claiming more than the tool showed. */
    public String figures() {
        if (failed) {
            return "failed after " + invocations + " invocation(s)";
        }
        if (coverage().complete() && invocations < budget) {
            return invocations + " invocations, stopped once all " + coverage().total()
                    + " distinct step sequences of the scenario were among them (budget " + budget + ")";
        }
        String coverage = coverage().known() ? "; " + coverage() : "";
        if (exhausted()) {
            return invocations + " invocations, all Lincheck generated (budget " + budget + ")" + coverage;
        }
        return invocations + " invocations explored (budget " + budget + ", bounded)" + coverage;
    }
}
