package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import vllmrace.lincheck.verdict.LincheckVerdicts;
import vllmrace.lincheck.verdict.TraceStore;
import vllmrace.races.Expectation;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.Shard;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;

/**
 * Lincheck's verdict test of one race and variant, called by the generated {@code LincheckVerdictsPart1Test} and {@code LincheckVerdictsPart2Test} (one test per
 * cell, named {@code <Race> [Lincheck, <variant>]}): model-checked on the race's own scenario and judged by
 * {@link LincheckVerdicts}, the path the catalogue uses. Reported must find the race, fixed must be clean (a small
 * scenario with every distinct step sequence among the invocations), vLLM main as the merged fixes make it. A reported
 * counterexample is saved under target/evidence (the catalogue writes results/). A race of another shard is skipped.
 */
final class LincheckVerdictCheck {
    private LincheckVerdictCheck() {
    }

    static void verdict(Subject subject) {
        Race race = subject.race();
        Variant variant = subject.variant();
        Assumptions.assumeTrue(Shard.current().includes(race), race + " is in another shard than " + Shard.current());
        LincheckVerdicts.Checked checked = LincheckVerdicts.check(subject);
        Verdict verdict = checked.verdict();
        System.out.println(verdict.headline() + ", " + checked.result().wallMillis() + " ms");
        assertTrue(verdict.asExpected(), verdict.headline() + "\n" + verdict.detail()
                + (race.expected(variant) == Expectation.BUG_FOUND ? "\nthe reproducer no longer finds the race" : ""));
        if (verdict.observed() == Observed.BUG_FOUND) {
            assertFalse(checked.result().steps().isEmpty(), "the violating interleaving's steps were not recorded");
            if (variant == Variant.REPORTED) {
                TraceStore.save(Path.of("target", "evidence"), race, variant, checked.result());
            }
        }
    }
}
