package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.lincheck.verdict.LincheckVerdicts;
import vllmrace.lincheck.verdict.TraceStore;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Expectation;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.Shard;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;

/**
 * Every race of the registry, every variant (reported, fixed, vLLM main), model-checked by Lincheck on the race's own
 * scenario and judged by {@link LincheckVerdicts}, the path the catalogue uses: reported must find the race, fixed
 * must be clean (a small scenario with every step interleaving among the invocations), vLLM main as the merged fixes
 * make it. A reported counterexample is saved under target/evidence (the catalogue writes results/).
 */
@DisplayName("Lincheck")
class RaceScenarioModelCheckTest {

    static Stream<Arguments> cells() {
        return Cells.verdicts(Engine.LINCHECK, Shard.current()).stream().map(s -> Arguments.of(s.race(), s.variant()));
    }

    @DisplayName("verdict")
    @ParameterizedTest(name = "{0} [Lincheck, {1}]", allowZeroInvocations = true)
    @MethodSource("cells")
    void verdictMatchesCatalogue(Race race, Variant variant) {
        LincheckVerdicts.Checked checked = LincheckVerdicts.check(race, variant);
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

    /** A reported variant whose actor 1 raises: a harness error, never the race. */
    @Test
    @DisplayName("self-test: an actor that raises is a harness error, not the race [Lincheck, reported]")
    void anActorThatRaisesIsAHarnessErrorNotTheRace() {
        Assumptions.assumeTrue(Shard.current().includes(Race.DoubleFreeOnAbortedAsyncSave), "another shard's");
        Subject broken = Subject.of(Race.DoubleFreeOnAbortedAsyncSave, Variant.REPORTED).withActorFault();
        Verdict verdict = LincheckVerdicts.check(broken, LincheckRun.SCENARIO_BUDGET).verdict();
        System.out.println("self-test: " + verdict.headline() + ": " + verdict.detail());
        assertEquals(Observed.HARNESS_ERROR, verdict.observed(), verdict.headline() + "\n" + verdict.detail());
        assertTrue(verdict.detail().contains("injected fault"), verdict.detail());
    }
}
