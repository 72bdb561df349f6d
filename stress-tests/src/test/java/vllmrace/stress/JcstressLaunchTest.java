package vllmrace.stress;

import vllmrace.races.derive.JcstressNames;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
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
 * The JCStress launch itself: its harness self-test (a reported variant whose actor 1 raises must come out a harness
 * error) and that it ran exactly the registry's tests of this shard. The verdicts are the generated
 * {@code JcstressVerdictsTest}, through {@link JcstressVerdictCheck}.
 */
@DisplayName("JCStress launch")
class JcstressLaunchTest {

    /** A reported variant whose actor 1 raises: every sample is a modelling error, so the verdict is a harness error. */
    @Test
    @DisplayName("self-test: an actor that raises is a harness error, not the race [JCStress, reported]")
    void anActorThatRaisesIsAHarnessErrorNotTheRace() throws Exception {
        Assumptions.assumeTrue(JcstressVerdictCheck.SELF_TEST, "the self-test runs in another shard");
        Verdict verdict = JcstressVerdicts.verdict(JcstressSources.SELF_TEST_RACE, Variant.REPORTED, JcstressSources.SELF_TEST,
                JcstressVerdictCheck.results());
        System.out.println("self-test: " + verdict.headline());
        assertEquals(Observed.HARNESS_ERROR, verdict.observed(), verdict.headline() + ": " + verdict.detail());
        assertTrue(verdict.runs() > 0 && !verdict.asExpected(), verdict.headline());
    }

    @Test
    @DisplayName("every JCStress result belongs to a registered race of this shard")
    void everyJcstressTestOfTheSuiteBelongsToARegisteredRace() throws Exception {
        JcstressResults results = JcstressVerdictCheck.results();
        Assumptions.assumeTrue(results != null, "no race in shard " + JcstressVerdictCheck.SHARD);
        for (String test : results.byTest().keySet()) {
            boolean known = test.equals(JcstressSources.SELF_TEST) || Arrays.stream(Race.values()).anyMatch(race ->
                    JcstressVerdicts.variants(race).stream().anyMatch(v -> JcstressNames.testName(race, v).equals(test)));
            assertTrue(known, test + " ran but no registry race names it");
        }
        long cells = Cells.verdicts(Engine.JCSTRESS, JcstressVerdictCheck.SHARD).size();
        assertEquals(cells + (JcstressVerdictCheck.SELF_TEST ? 1 : 0), results.byTest().size(),
                "one JCStress result per race and variant of shard " + JcstressVerdictCheck.SHARD
                        + (JcstressVerdictCheck.SELF_TEST ? ", and the self-test" : ""));
    }
}
