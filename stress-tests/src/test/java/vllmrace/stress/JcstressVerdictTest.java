package vllmrace.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Expectation;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.Shard;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;
import vllmrace.races.derive.JcstressSources;
import vllmrace.stress.verdict.JcstressResults;
import vllmrace.stress.verdict.JcstressRun;
import vllmrace.stress.verdict.JcstressVerdicts;

/**
 * Runs every JCStress test generated from the registry, and the harness self-test, in one launch (quick settings; a
 * reported variant that has not shown its race yet gets up to two more launches), reads the results back, and asserts
 * one verdict per race and JCStress variant through {@link JcstressVerdicts}: the reported variant must have OBSERVED
 * the race, the fixed variant must have produced samples and none violating. JCStress's exit code is not trusted.
 */
@DisplayName("JCStress")
class JcstressVerdictTest {
    private static final Shard SHARD = Shard.current();
    /** The self-test runs in the shard of the race it breaks. */
    private static final boolean SELF_TEST = SHARD.includes(JcstressSources.SELF_TEST_RACE);
    private static JcstressResults results;

    @BeforeAll
    static void runJcstress() throws Exception {
        List<Race> races = Cells.races(SHARD);
        results = races.isEmpty() ? null : JcstressVerdicts.runUntilObserved(JcstressRun.fromSystemProperties(), races,
                SELF_TEST ? List.of(JcstressSources.SELF_TEST) : List.of());
    }

    static Stream<Arguments> cells() {
        return Cells.verdicts(Engine.JCSTRESS, SHARD).stream().map(s -> Arguments.of(s.race(), s.variant()));
    }

    @DisplayName("verdict")
    @ParameterizedTest(name = "{0} [JCStress, {1}]", allowZeroInvocations = true)
    @MethodSource("cells")
    void verdictMatchesCatalogue(Race race, Variant variant) {
        Verdict verdict = JcstressVerdicts.verdict(race, variant, results);
        System.out.println(verdict.headline());
        assertTrue(verdict.asExpected(), verdict.headline() + ": " + verdict.detail()
                + (race.expected(variant) == Expectation.BUG_FOUND ? "\nthe reproducer no longer finds the race" : ""));
    }

    /** A reported variant whose actor 1 raises: every sample is a modelling error, so the verdict is a harness error. */
    @Test
    @DisplayName("self-test: an actor that raises is a harness error, not the race [JCStress, reported]")
    void anActorThatRaisesIsAHarnessErrorNotTheRace() {
        Assumptions.assumeTrue(SELF_TEST, "the self-test runs in shard " + JcstressSources.SELF_TEST_RACE.ordinal());
        Verdict verdict = JcstressVerdicts.verdict(JcstressSources.SELF_TEST_RACE, Variant.REPORTED, JcstressSources.SELF_TEST, results);
        System.out.println("self-test: " + verdict.headline());
        assertEquals(Observed.HARNESS_ERROR, verdict.observed(), verdict.headline() + ": " + verdict.detail());
        assertTrue(verdict.runs() > 0 && !verdict.asExpected(), verdict.headline());
    }

    @Test
    @DisplayName("every JCStress result belongs to a registered race of this shard")
    void everyJcstressTestOfTheSuiteBelongsToARegisteredRace() {
        Assumptions.assumeTrue(results != null, "no race in shard " + SHARD);
        for (String test : results.byTest().keySet()) {
            boolean known = test.equals(JcstressSources.SELF_TEST) || Arrays.stream(Race.values()).anyMatch(race ->
                    JcstressVerdicts.variants(race).stream().anyMatch(v -> race.jcstressTestName(v).equals(test)));
            assertTrue(known, test + " ran but no registry race names it");
        }
        assertEquals(cells().count() + (SELF_TEST ? 1 : 0), results.byTest().size(),
                "one JCStress result per race and variant of shard " + SHARD + (SELF_TEST ? ", and the self-test" : ""));
    }
}
