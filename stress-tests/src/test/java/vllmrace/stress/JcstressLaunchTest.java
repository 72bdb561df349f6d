package vllmrace.stress;

import vllmrace.races.derive.JcstressNames;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;
import vllmrace.races.derive.JcstressSources;
import vllmrace.stress.verdict.JcstressResults;
import vllmrace.stress.verdict.JcstressVerdicts;

/**
 * The JCStress launch itself: its harness self-tests (a broken run, in a variant that races or one that is clean, must
 * come out a harness error) and that it ran exactly the registry's tests of this shard. The verdicts are the generated
 * {@code JcstressVerdictsTest}, through {@link JcstressVerdictCheck}.
 */
@DisplayName("JCStress launch")
class JcstressLaunchTest {

    /**
     * Each harness self-test (actor 1 raises, or a stray detector, in the reported and in the fixed variant): every
     * sample is a modelling error, so the verdict is a harness error, whether the run would have been the race or clean.
     */
    @ParameterizedTest(name = "self-test: {0} is a harness error [JCStress]")
    @MethodSource("selfTests")
    void aBrokenRunIsAHarnessErrorNeverTheRaceNorClean(JcstressSources.SelfTest test) throws Exception {
        Assumptions.assumeTrue(JcstressVerdictCheck.SELF_TEST, "the self-test runs in another shard");
        Verdict verdict = JcstressVerdicts.verdict(JcstressSources.SELF_TEST_RACE, test.variant(), test.testName(),
                JcstressVerdictCheck.results());
        System.out.println("self-test " + test + ": " + verdict.headline());
        assertEquals(Observed.HARNESS_ERROR, verdict.observed(), verdict.headline() + ": " + verdict.detail());
        assertTrue(verdict.runs() > 0 && !verdict.asExpected(), verdict.headline());
    }

    static List<JcstressSources.SelfTest> selfTests() {
        return JcstressSources.SELF_TESTS;
    }

    @Test
    @DisplayName("every JCStress result belongs to a registered race of this shard")
    void everyJcstressTestOfTheSuiteBelongsToARegisteredRace() throws Exception {
        JcstressResults results = JcstressVerdictCheck.results();
        Assumptions.assumeTrue(results != null, "no race in shard " + JcstressVerdictCheck.SHARD);
        for (String test : results.byTest().keySet()) {
            boolean known = JcstressSources.SELF_TESTS.stream().anyMatch(t -> t.testName().equals(test)) || Arrays.stream(Race.values()).anyMatch(race ->
                    JcstressVerdicts.variants(race).stream().anyMatch(v -> JcstressNames.testName(race, v).equals(test)));
            assertTrue(known, test + " ran but no registry race names it");
        }
        long cells = Cells.verdicts(Engine.JCSTRESS, JcstressVerdictCheck.SHARD).size();
        assertEquals(cells + (JcstressVerdictCheck.SELF_TEST ? JcstressSources.SELF_TESTS.size() : 0), results.byTest().size(),
                "one JCStress result per race and variant of shard " + JcstressVerdictCheck.SHARD
                        + (JcstressVerdictCheck.SELF_TEST ? ", and the self-tests" : ""));
    }
}
