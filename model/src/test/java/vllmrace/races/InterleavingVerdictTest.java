package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The harness self-tests of the step enumerator and the fix-switch matrix, by class: every race, every judged variant
 * (the one that races and the one that is clean, so both of the arbiter's paths), every {@link HarnessFault}. A broken
 * run is a harness error, never the race and never clean (the verdicts themselves are the generated
 * {@code EveryInterleavingVerdictsTest}).
 */
@DisplayName("every interleaving self-test")
class InterleavingVerdictTest {

    static Stream<Arguments> brokenRuns() {
        List<Arguments> runs = new ArrayList<>();
        for (Race race : Cells.races(Shard.current())) {
            for (Variant variant : new Variant[] {Variant.REPORTED, Variant.FIXED}) {
                if (race.expected(variant) != Expectation.NOT_APPLICABLE) {
                    for (HarnessFault fault : HarnessFault.values()) {
                        runs.add(Arguments.of(race, variant, fault));
                    }
                }
            }
        }
        return runs.stream();
    }

    static Stream<Arguments> matrixColumns() {
        return Cells.races(Shard.current()).stream().flatMap(r -> Stream.of(Arguments.of(r, "none"), Arguments.of(r, "all")));
    }

    @DisplayName("self-test")
    @ParameterizedTest(name = "{0} [every interleaving, {1}, {2}]: harness error", allowZeroInvocations = true)
    @MethodSource("brokenRuns")
    void aBrokenRunIsAHarnessErrorNeverTheRaceNorClean(Race race, Variant variant, HarnessFault fault) {
        Verdict honest = InterleavingVerdicts.verdict(Subject.of(race, variant));
        assertTrue(honest.asExpected(), "without the fault: " + honest.headline());
        Verdict verdict = InterleavingVerdicts.verdict(fault.on(Subject.of(race, variant)));
        assertEquals(Observed.HARNESS_ERROR, verdict.observed(), verdict.headline());
        assertTrue(verdict.detail().contains("schedule "), verdict.detail());
        assertFalse(verdict.asExpected(), "a harness error must fail the cell");
    }

    /**
     * A fix-switch cell counts every detector finding (a neighbour race shows there), but an actor that raises is a
     * modelling error even in a run that also broke an invariant, in a column that races and in one that is clean.
     */
    @DisplayName("self-test")
    @ParameterizedTest(name = "{0} [fix-switch matrix, fixes {1}, actor 1 raises (first or last step), a detector fires]: harness error",
            allowZeroInvocations = true)
    @MethodSource("matrixColumns")
    void aRaisingActorIsAModellingErrorInAFixCellEvenWithAFinding(Race race, String column) {
        Subject subject = Subject.of(race, Variant.REPORTED);
        FixMatrix.Cell finding = FixMatrix.cell(race, column, s -> ((TwoActorScenario) s).violationLog()
                .record(subject.strayKind(), "R", "a finding the race does not declare (harness self-test)"));
        assertEquals(Observed.BUG_FOUND, finding.observed(), "a finding alone is counted: " + finding.figures());
        assertEquals(finding.schedules(), finding.byInvariant().get(subject.strayKind().invariant()), finding.figures());

        for (HarnessFault fault : new HarnessFault[] {HarnessFault.ACTOR_RAISES, HarnessFault.ACTOR_RAISES_AFTER_ITS_WORK}) {
            FixMatrix.Cell broken = FixMatrix.cell(race, column, s -> {
                fault.inject(s, subject.strayKind());
                ((TwoActorScenario) s).violationLog().record(subject.strayKind(), "R", "and a finding (harness self-test)");
            });
            assertEquals(Observed.HARNESS_ERROR, broken.observed(), fault + ": " + broken.figures());
            assertEquals(broken.schedules(), broken.modellingErrors(), fault + ": every run is a modelling error: " + broken.figures());
        }
    }
}
