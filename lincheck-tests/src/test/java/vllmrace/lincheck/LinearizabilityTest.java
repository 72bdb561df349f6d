package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.races.Race;

/**
 * Every linearizability check, both ways: with each of its races' reported switches it must FAIL (so the
 * checker is shown to find each race); with every fix ON it must pass in every interleaving it explored.
 */
class LinearizabilityTest {

    static Stream<Arguments> reportedCells() {
        return Arrays.stream(LinearizabilityCheck.values())
                .flatMap(check -> check.races().stream().map(race -> Arguments.of(check, race)));
    }

    @ParameterizedTest(name = "{0} linearizability, {1} reported: fails")
    @MethodSource("reportedCells")
    void reportedVariantIsNotLinearizable(LinearizabilityCheck check, Race race) {
        LincheckResult result = check.runReported(race);
        System.out.println(result.check() + ": " + result.figures());
        assertTrue(result.failed(), check + " passed with " + race + " as reported: " + result.figures());
    }

    @ParameterizedTest(name = "{0} linearizability, every fix on: passes")
    @EnumSource(LinearizabilityCheck.class)
    void fixedVariantIsLinearizableInEveryExploredInterleaving(LinearizabilityCheck check) {
        LincheckResult result = check.runFixed();
        System.out.println(result.check() + ": " + result.figures());
        assertTrue(result.invocations() > 0, "vacuous: no invocation ran");
        assertFalse(result.failed(), result.report());
    }
}
