package vllmrace.lincheck.verdict;

import java.util.List;

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
 */
public record LincheckResult(String check, boolean failed, long invocations, int budget, long wallMillis,
                             String report, String detailedReport, List<String> steps, List<String> violations) {

    /** True when Lincheck ran out of interleavings before the budget (only meaningful without a failure). */
    public boolean exhausted() {
        return !failed && invocations < budget;
    }

    /** How to word the figures without claiming more than the tool showed. */
    public String figures() {
        if (failed) {
            return "failed after " + invocations + " invocation(s)";
        }
        if (exhausted()) {
            return invocations + " invocations, all Lincheck generated (budget " + budget + ")";
        }
        return invocations + " invocations explored (budget " + budget + ", bounded)";
    }
}
