package vllmrace.stress;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Assumptions;
import vllmrace.races.Cells;
import vllmrace.races.Expectation;
import vllmrace.races.Race;
import vllmrace.races.Shard;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;
import vllmrace.races.derive.JcstressSources;
import vllmrace.stress.verdict.JcstressResults;
import vllmrace.stress.verdict.JcstressRun;
import vllmrace.stress.verdict.JcstressVerdicts;

/**
 * JCStress's verdict test of one race and variant, called by the generated {@code JcstressVerdictsTest} (one test per
 * cell, named {@code <Race> [JCStress, <variant>]}). Every JCStress test of the shard's races, and the harness
 * self-test, run in ONE launch, the first time any test asks (quick settings; a reported variant that has not shown its
 * race yet gets up to two more launches); the results are read back and judged by {@link JcstressVerdicts}, the path
 * the catalogue uses: the reported variant must have OBSERVED the race, the fixed variant must have produced samples
 * and none violating. JCStress's exit code is not trusted.
 */
final class JcstressVerdictCheck {
    static final Shard SHARD = Shard.current();
    /** The self-test runs in the shard of the race it breaks. */
    static final boolean SELF_TEST = SHARD.includes(JcstressSources.SELF_TEST_RACE);
    private static JcstressResults results;

    private JcstressVerdictCheck() {
    }

    /** The shard's one launch (null when the shard has no race). */
    static synchronized JcstressResults results() throws Exception {
        List<Race> races = Cells.races(SHARD);
        if (results == null && !races.isEmpty()) {
            results = JcstressVerdicts.runUntilObserved(JcstressRun.fromSystemProperties(), races,
                    SELF_TEST ? JcstressSources.SELF_TESTS.stream().map(JcstressSources.SelfTest::testName).toList() : List.of());
        }
        return results;
    }

    static void verdict(Subject subject) throws Exception {
        Race race = subject.race();
        Variant variant = subject.variant();
        Assumptions.assumeTrue(SHARD.includes(race), race + " is in another shard than " + SHARD);
        Verdict verdict = JcstressVerdicts.verdict(race, variant, results());
        System.out.println(verdict.headline());
        assertTrue(verdict.asExpected(), verdict.headline() + ": " + verdict.detail()
                + (race.expected(variant) == Expectation.BUG_FOUND ? "\nthe reproducer no longer finds the race" : ""));
    }
}
