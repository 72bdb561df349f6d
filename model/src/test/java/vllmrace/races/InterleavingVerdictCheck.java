package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;

/**
 * The step enumerator's verdict test of one race and variant, called by the generated {@code EveryInterleavingVerdictsTest}
 * (one test per cell, named {@code <Race> [every interleaving, <variant>]}): computed in this run over every schedule by
 * {@link InterleavingVerdicts}, the path the catalogue prints, and asserted against the registry. A race of another
 * {@link Shard} is skipped.
 */
final class InterleavingVerdictCheck {
    private InterleavingVerdictCheck() {
    }

    static void verdict(Subject subject) {
        Assumptions.assumeTrue(Shard.current().includes(subject.race()), subject.race() + " is in another shard than " + Shard.current());
        Verdict verdict = InterleavingVerdicts.verdict(subject);
        assertTrue(verdict.runs() > 0, "no schedule ran");
        assertTrue(verdict.asExpected(), verdict.headline() + "\n" + verdict.detail());
    }
}
