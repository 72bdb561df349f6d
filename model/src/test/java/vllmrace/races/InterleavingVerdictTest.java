package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The step enumerator's harness self-test: a reported variant whose actor 1 raises must be a harness error, never the
 * race (the verdicts themselves are the generated {@code EveryInterleavingVerdictsTest}).
 */
@DisplayName("every interleaving self-test")
class InterleavingVerdictTest {

    static Stream<Race> races() {
        return Cells.races(Shard.current()).stream();
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

    /** A detector the race does not declare is a harness error, never the race: every run of the reported variant records one. */
    @DisplayName("self-test")
    @ParameterizedTest(name = "{0} [every interleaving, reported, a stray detector]: harness error", allowZeroInvocations = true)
    @MethodSource("races")
    void aStrayDetectorIsAHarnessErrorNotTheRace(Race race) {
        Variant variant = race.expected(Variant.REPORTED) == Expectation.BUG_FOUND ? Variant.REPORTED : Variant.FIXED;
        Verdict verdict = InterleavingVerdicts.verdict(Subject.of(race, variant).withStrayDetector());
        assertEquals(Observed.HARNESS_ERROR, verdict.observed(), verdict.headline());
        assertTrue(!verdict.asExpected(), "a harness error must fail the cell");
    }
}
