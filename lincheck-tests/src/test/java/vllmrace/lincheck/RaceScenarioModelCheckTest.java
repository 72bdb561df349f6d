package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.lincheck.verdict.TraceStore;
import vllmrace.races.Expectation;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/**
 * Every race of the registry, both variants, model-checked by Lincheck on the race's own scenario. The
 * reported variant must FAIL (its counterexample is saved to results/traces/); the fixed variant must pass.
 * A clean fixed run counts only because the same harness is asserted to fail on the reported variant, and, for a
 * scenario with few step interleavings, only if Lincheck's invocations ran every one of them.
 */
class RaceScenarioModelCheckTest {
    /** Scenarios with at most this many step interleavings must have all of them among the fixed run's invocations. */
    private static final int SMALL_SCENARIO = 20;

    static Stream<Arguments> cells() {
        return Arrays.stream(Race.values()).flatMap(race -> Arrays.stream(Variant.values())
                .filter(variant -> race.expected(variant) != Expectation.NOT_APPLICABLE)
                .map(variant -> Arguments.of(race, variant)));
    }

    @ParameterizedTest(name = "{0} [Lincheck, {1}]")
    @MethodSource("cells")
    void verdictMatchesCatalogue(Race race, Variant variant) {
        LincheckResult result = LincheckRun.checkScenario(race, race.fixes(variant), LincheckRun.SCENARIO_BUDGET);
        System.out.println(race + " [Lincheck, " + variant + "]: " + result.figures() + ", " + result.wallMillis() + " ms");
        assertTrue(result.invocations() > 0, "Lincheck explored no interleaving of " + race + ": a vacuous run");
        if (race.expected(variant) == Expectation.BUG_FOUND) {
            assertTrue(result.failed(), race + " " + variant + ": the reproducer no longer finds the race ("
                    + result.figures() + ")");
            assertFalse(result.steps().isEmpty(), "the violating interleaving's steps were not recorded");
            TraceStore.save(race, variant, result);
        } else {
            assertFalse(result.failed(), race + " " + variant + " must be clean, Lincheck found:\n" + result.report());
            // a small scenario must be covered in full by the budget, or the clean verdict says less than it seems
            if (result.coverage().total() <= SMALL_SCENARIO) {
                assertTrue(result.coverage().complete(), race + " " + variant + ": " + result.figures());
            }
            assertEquals(Expectation.CLEAN, race.expected(variant));
        }
    }
}
