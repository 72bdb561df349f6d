package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.races.Race;
import vllmrace.races.Shard;

/**
 * Every linearizability check, both ways: with each of its races' reported switches it must FAIL (so the
 * checker is shown to find each race); with every fix ON it must pass in every interleaving it explored.
 */
class LinearizabilityTest {

    static Stream<Arguments> reportedCells() {
        return LinearizabilityCheck.cells(Shard.current()).stream().filter(c -> c.race() != null)
                .map(c -> Arguments.of(c.check(), c.race()));
    }

    static Stream<LinearizabilityCheck> fixedCells() {
        return LinearizabilityCheck.cells(Shard.current()).stream().filter(c -> c.race() == null).map(LinearizabilityCheck.Cell::check);
    }

    @DisplayName("linearizability")
    @ParameterizedTest(name = "{1} [Lincheck {0} linearizability, reported]: fails", allowZeroInvocations = true)
    @MethodSource("reportedCells")
    void reportedVariantIsNotLinearizable(LinearizabilityCheck check, Race race) {
        LincheckResult result = check.runReported(race);
        System.out.println(result.check() + ": " + result.figures());
        assertTrue(result.failed(), check + " passed with " + race + " as reported: " + result.figures());
        // an invariant the check validates broke: it must be one the race's own outcomes declare, not a neighbour's
        int broken = result.report().indexOf("invariant broken: ");
        if (broken >= 0) {
            String found = result.report().substring(broken, result.report().indexOf('\n', broken) < 0 ? result.report().length()
                    : result.report().indexOf('\n', broken));
            java.util.Set<String> own = new java.util.TreeSet<>();
            for (vllmrace.races.RaceOutcome outcome : race.outcomes()) {
                outcome.declaredDetectors().forEach(kind -> {
                    own.add(kind.name() + "[");
                    own.add(kind.invariant() + ":"); // the scheduler check words its own invariants by their code
                });
            }
            assertTrue(own.stream().anyMatch(found::contains), race + "'s reported cell broke no invariant the race declares "
                    + own + ": " + found);
        }
    }

    @DisplayName("linearizability")
    @ParameterizedTest(name = "{0} [Lincheck linearizability, every fix on]: passes", allowZeroInvocations = true)
    @MethodSource("fixedCells")
    void fixedVariantIsLinearizableInEveryExploredInterleaving(LinearizabilityCheck check) {
        LincheckResult result = check.runFixed();
        System.out.println(result.check() + ": " + result.figures());
        assertTrue(result.invocations() > 0, "vacuous: no invocation ran");
        assertFalse(result.failed(), result.report());
    }
}
