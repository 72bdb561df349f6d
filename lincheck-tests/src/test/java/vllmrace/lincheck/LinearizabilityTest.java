package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.lincheck.prove.Depth;
import vllmrace.lincheck.prove.ProofResult;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.races.Race;
import vllmrace.races.Shard;

/**
 * Every linearizability check, both ways and in both engines: with each of its races' reported switches it must FAIL
 * (so the checker is shown to find each race); with every fix ON it must pass in every interleaving it explored.
 * Lincheck's verdict and the bounded-exhaustive check's (each race's shape, {@link Depth#SHAPE}) must agree on every
 * cell: where they do not, the specification or an exploration is wrong, and the build fails.
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
    @ParameterizedTest(name = "{1} [Lincheck and bounded-exhaustive {0} linearizability, reported]: both fail", allowZeroInvocations = true)
    @MethodSource("reportedCells")
    void reportedVariantIsNotLinearizable(LinearizabilityCheck check, Race race) {
        LincheckResult result = check.runReported(race);
        System.out.println(result.check() + ": " + result.figures());
        ProofResult proof = check.proveReported(race, Depth.SHAPE);
        System.out.println(proof.check() + " (bounded-exhaustive): " + proof.figures());
        assertTrue(result.failed(), check + " passed with " + race + " as reported: " + result.figures());
        assertTrue(proof.failed(), "the engines disagree: Lincheck found " + race + ", the bounded-exhaustive check did not: "
                + proof.figures());
        assertOwnInvariant(check, race, result.report());
        assertOwnInvariant(check, race, proof.counterexample().reason());
    }

    /** An invariant the check validates broke: it must be one the race's own outcomes declare, not a neighbour's. */
    static void assertOwnInvariant(LinearizabilityCheck check, Race race, String report) {
        assertFalse(report.contains("modelling error"), race + ": a modelling error is never the race: " + report);
        assertTrue(!report.contains("invariant broken: ") || LinearizabilityProofs.racesBreaking(check, report).contains(race),
                race + "'s reported cell broke no invariant the race declares: " + report);
    }

    @DisplayName("linearizability")
    @ParameterizedTest(name = "{0} [Lincheck and bounded-exhaustive linearizability, every fix on]: both pass", allowZeroInvocations = true)
    @MethodSource("fixedCells")
    void fixedVariantIsLinearizableInEveryExploredInterleaving(LinearizabilityCheck check) {
        LincheckResult result = check.runFixed();
        System.out.println(result.check() + ": " + result.figures());
        ProofResult proof = check.proveFixed(Depth.SHAPE);
        System.out.println(proof.check() + " (bounded-exhaustive): " + proof.figures());
        assertTrue(result.invocations() > 0, "vacuous: no invocation ran");
        assertFalse(result.failed(), result.report());
        assertFalse(proof.failed(), () -> "the engines disagree: Lincheck passed, the bounded-exhaustive check found "
                + proof.counterexample());
        assertTrue(proof.complete() && proof.programs() >= check.races().size() && proof.histories() >= proof.programs(),
                "vacuous: " + proof.figures());
    }
}
