package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The step enumerator's verdict on every race and variant (reported, fixed, vLLM main), computed in this run over every
 * schedule and asserted against the registry, through the same {@link InterleavingVerdicts} the catalogue prints. A
 * reported variant must race in some interleaving and in no sequential order; no schedule of any variant may end in a
 * modelling error.
 */
class InterleavingVerdictTest {

    static Stream<Arguments> cells() {
        return Arrays.stream(Race.values()).flatMap(race -> Engine.ENUMERATOR.variants().stream()
                .filter(variant -> race.expected(variant) != Expectation.NOT_APPLICABLE)
                .map(variant -> Arguments.of(race, variant)));
    }

    @ParameterizedTest(name = "{0} [every interleaving, {1}]")
    @MethodSource("cells")
    void verdictMatchesCatalogue(Race race, Variant variant) {
        Verdict verdict = InterleavingVerdicts.verdict(race, variant);
        assertTrue(verdict.runs() > 0, "no schedule ran");
        assertTrue(verdict.asExpected(), verdict.headline() + "\n" + verdict.detail());
    }

    /** A broken actor is a harness error, never the race: the reported variant with actor 1 made to raise. */
    @ParameterizedTest(name = "{0} [every interleaving, reported, actor 1 raises]: harness error")
    @EnumSource(Race.class)
    void anActorThatRaisesIsAHarnessErrorNotTheRace(Race race) {
        Variant variant = race.expected(Variant.REPORTED) == Expectation.BUG_FOUND ? Variant.REPORTED : Variant.FIXED;
        Verdict verdict = InterleavingVerdicts.verdict(Subject.of(race, variant).withActorFault());
        assertEquals(Observed.HARNESS_ERROR, verdict.observed(), verdict.headline());
        assertTrue(verdict.detail().contains("schedule ") && verdict.detail().contains("injected fault"), verdict.detail());
        assertTrue(!verdict.asExpected(), "a harness error must fail the cell");
    }
}
