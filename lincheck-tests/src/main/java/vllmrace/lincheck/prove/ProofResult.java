package vllmrace.lincheck.prove;

import java.util.List;

/**
 * What a bounded-exhaustive check did: the bounds, how many programs and interleavings it ran (each interleaving is
 * one history checked), its time, and, if some history is not linearizable or breaks an invariant, the first one found:
 * in a smallest failing program (programs run fewest parallel calls first).
 *
 * @param complete true when every program of every bound ran (false once it stopped at a counterexample)
 */
public record ProofResult(String check, List<String> bounds, long programs, long histories, long millis, boolean complete,
                          Counterexample counterexample) {

    /** A history that fails: the program, the interleaving as numbered steps, and why it fails. */
    public record Counterexample(Program program, List<String> history, String reason) {
        public String invariantBroken() {
            return reason.startsWith(ExhaustiveCheck.INVARIANT_BROKEN) ? reason : null;
        }

        @Override
        public String toString() {
            return reason + "\n  program: " + program + "\n  " + String.join("\n  ", history);
        }
    }

    public boolean failed() {
        return counterexample != null;
    }

    /** Two results of one check as one: their bounds and counts added, the first failure kept. */
    public ProofResult plus(ProofResult other) {
        List<String> all = new java.util.ArrayList<>(bounds);
        all.addAll(other.bounds);
        return new ProofResult(check, all, programs + other.programs, histories + other.histories, millis + other.millis,
                complete && other.complete, counterexample != null ? counterexample : other.counterexample);
    }

    public String figures() {
        return failed() ? "not linearizable: " + counterexample.reason() + " (program of " + counterexample.program().size()
                + " calls, after " + histories + " histories)"
                : "linearizable within the bound: " + programs + " programs, " + histories + " histories, all checked (" + millis + " ms)";
    }
}
