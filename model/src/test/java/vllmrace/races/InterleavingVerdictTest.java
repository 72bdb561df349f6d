package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The step enumerator's verdict on every race and variant (reported, fixed, vLLM main), computed in this run over every
 * schedule and asserted against the registry, through the same {@link InterleavingVerdicts} the catalogue prints. A
 * reported variant must race in some interleaving and in no sequential order; no schedule of any variant may end in a
 * modelling error.
 */
@DisplayName("every interleaving")
class InterleavingVerdictTest {

    static Stream<Arguments> cells() {
        return Cells.verdicts(Engine.ENUMERATOR, Shard.current()).stream().map(s -> Arguments.of(s.race(), s.variant()));
    }

    static Stream<Race> races() {
        return Cells.races(Shard.current()).stream();
    }

    @DisplayName("verdict")
    @ParameterizedTest(name = "{0} [every interleaving, {1}]", allowZeroInvocations = true)
    @MethodSource("cells")
    void verdictMatchesCatalogue(Race race, Variant variant) {
        Verdict verdict = InterleavingVerdicts.verdict(race, variant);
        assertTrue(verdict.runs() > 0, "no schedule ran");
        assertTrue(verdict.asExpected(), verdict.headline() + "\n" + verdict.detail());
    }

    /** A broken actor is a harness error, never the race: the reported variant with actor 1 made to raise. */
    @DisplayName("self-test")
    @ParameterizedTest(name = "{0} [every interleaving, reported, actor 1 raises]: harness error", allowZeroInvocations = true)
    @MethodSource("races")
    void anActorThatRaisesIsAHarnessErrorNotTheRace(Race race) {
        Variant variant = race.expected(Variant.REPORTED) == Expectation.BUG_FOUND ? Variant.REPORTED : Variant.FIXED;
        Verdict verdict = InterleavingVerdicts.verdict(Subject.of(race, variant).withActorFault());
        assertEquals(Observed.HARNESS_ERROR, verdict.observed(), verdict.headline());
        assertTrue(verdict.detail().contains("schedule ") && verdict.detail().contains("injected fault"), verdict.detail());
        assertTrue(!verdict.asExpected(), "a harness error must fail the cell");
    }
}
