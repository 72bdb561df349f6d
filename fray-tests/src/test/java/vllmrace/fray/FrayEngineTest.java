package vllmrace.fray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import vllmrace.fray.FrayExploration.Kind;
import vllmrace.fray.FrayExploration.Result;
import vllmrace.fray.FrayExploration.SchedulerKind;
import vllmrace.races.Expectation;
import vllmrace.races.HarnessFault;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Subject;
import vllmrace.races.Variant;

/**
 * The Fray engine on the race registry (runs only in the {@code fray} profile, in the JVM prepare-fray set up): each
 * catalogued race's reported variant found by POS within {@link #REPORTED_BUDGET}, its fixed variant clean for
 * {@code fray.test.budget} iterations (a sample, not every interleaving), and a broken harness reported as a harness
 * error, never as the race nor clean.
 */
class FrayEngineTest {
    /** Iterations a reported variant gets to show its race. */
    static final int REPORTED_BUDGET = 1000;
    /** Iterations a fixed variant must stay clean for (-Dfray.test.budget). */
    static final int FIXED_BUDGET = Integer.getInteger("fray.test.budget", 200);
    /** The race the harness self-tests break: the one the generated JCStress self-tests break. */
    static final Race SELF_TEST_RACE = Race.DoubleFreeOnAbortedAsyncSave;

    @Test
    @DisplayName("a reported variant is found by POS within its budget, as one of the race's violating outcomes")
    void reportedFoundByPos() {
        Result r = FrayExploration.explore(Subject.of(SELF_TEST_RACE, Variant.REPORTED), SchedulerKind.POS, REPORTED_BUDGET, 1);
        assertEquals(Kind.FOUND, r.kind(), r.toString());
        assertTrue(r.found());
        assertTrue(r.iterations() >= 1 && r.iterations() <= REPORTED_BUDGET, r.toString());
        assertTrue(violatingNames(SELF_TEST_RACE).contains(r.outcome()), r.toString());
    }

    @Test
    @DisplayName("a fixed variant stays clean for its whole budget, under POS and PCT")
    void fixedStaysClean() {
        for (SchedulerKind scheduler : SchedulerKind.values()) {
            Result r = FrayExploration.explore(Subject.of(SELF_TEST_RACE, Variant.FIXED), scheduler, FIXED_BUDGET, 1);
            assertEquals(new Result(Kind.CLEAN, FIXED_BUDGET, r.millis(), "CLEAN"), r);
            assertFalse(r.found());
        }
    }

    @Test
    @DisplayName("a modelling error (actor 1 raises after its work) is a harness error, never the race nor clean")
    void modellingErrorIsAnError() {
        for (Variant variant : List.of(Variant.REPORTED, Variant.FIXED)) {
            Subject broken = Subject.of(SELF_TEST_RACE, variant).withFault(HarnessFault.ACTOR_RAISES_AFTER_ITS_WORK);
            for (SchedulerKind scheduler : SchedulerKind.values()) {
                Result r = FrayExploration.explore(broken, scheduler, FIXED_BUDGET, 1);
                assertEquals(Kind.MODEL_ERROR, r.kind(), variant + " " + scheduler + ": " + r);
                assertFalse(r.found());
                assertTrue(r.outcome().startsWith("MODEL_ERROR:"), r.outcome());
                assertEquals(1, r.iterations(), "the first iteration is already broken: " + r);
            }
        }
    }

    @Test
    @DisplayName("every harness fault, in both variants, is a harness error")
    void everyFaultIsAnError() {
        for (HarnessFault fault : HarnessFault.values()) {
            for (Variant variant : List.of(Variant.REPORTED, Variant.FIXED)) {
                Result r = FrayExploration.explore(Subject.of(SELF_TEST_RACE, variant).withFault(fault), SchedulerKind.POS, 50, 1);
                assertEquals(Kind.MODEL_ERROR, r.kind(), fault + " " + variant + ": " + r);
            }
        }
    }

    @Test
    @DisplayName("the same seed explores the same schedules")
    void seedRepeats() {
        Subject subject = Subject.of(Race.AbortOfFinishedDelayFreed, Variant.REPORTED);
        for (SchedulerKind scheduler : SchedulerKind.values()) {
            Result a = FrayExploration.explore(subject, scheduler, REPORTED_BUDGET, 7);
            Result b = FrayExploration.explore(subject, scheduler, REPORTED_BUDGET, 7);
            assertEquals(a.iterations(), b.iterations(), scheduler + ": " + a + " / " + b);
            assertEquals(a.outcome(), b.outcome());
        }
    }

    @Test
    @DisplayName("the bench refuses an unknown race, a bad flag and a missing --out")
    void benchRefusesBadInput() {
        assertThrows(FrayBench.Usage.class, () -> FrayBench.parse(new String[] {"--out", "x.tsv", "NoSuchRace"}));
        assertThrows(FrayBench.Usage.class, () -> FrayBench.parse(new String[] {"--out", "x.tsv", "--bogus"}));
        assertThrows(FrayBench.Usage.class, () -> FrayBench.parse(new String[] {"--out", "x.tsv", "--runs", "0"}));
        assertThrows(FrayBench.Usage.class, () -> FrayBench.parse(new String[] {"--out", "x.tsv", "--variant", "main"}));
        assertThrows(FrayBench.Usage.class, () -> FrayBench.parse(new String[] {"DoubleFreeOnAbortedAsyncSave"}));
    }

    @Test
    @DisplayName("no race named: every race whose reported variant must find the bug")
    void benchDefaultsToTheCatalogue() throws Exception {
        FrayBench.Options o = FrayBench.parse(new String[] {"--out", "x.tsv"});
        assertEquals(FrayBench.catalogued(), o.races());
        assertFalse(o.races().isEmpty());
        assertTrue(o.races().stream().allMatch(r -> r.expected(Variant.REPORTED) == Expectation.BUG_FOUND));
        assertEquals(List.of(Variant.REPORTED, Variant.FIXED), o.variants());
        assertEquals(5, o.runs());
        assertEquals(1000, o.budget());
    }

    /** One test per catalogued race and variant: "{@code <Race> [fray, reported]}" and "{@code <Race> [fray, fixed]}". */
    @TestFactory
    Stream<DynamicTest> everyCataloguedRace() {
        return FrayBench.catalogued().stream().flatMap(race -> Stream.of(
                DynamicTest.dynamicTest(race.name() + " [fray, reported]", () -> {
                    Result r = FrayExploration.explore(Subject.of(race, Variant.REPORTED), SchedulerKind.POS, REPORTED_BUDGET, 1);
                    assertEquals(Kind.FOUND, r.kind(), r.toString());
                    assertTrue(violatingNames(race).contains(r.outcome()), r.toString());
                }),
                DynamicTest.dynamicTest(race.name() + " [fray, fixed]", () -> {
                    Result r = FrayExploration.explore(Subject.of(race, Variant.FIXED), SchedulerKind.POS, FIXED_BUDGET, 1);
                    assertEquals(Kind.CLEAN, r.kind(), r.toString());
                    assertEquals(FIXED_BUDGET, r.iterations());
                })));
    }

    private static List<String> violatingNames(Race race) {
        return Arrays.stream(race.outcomes()).filter(RaceOutcome::violation).map(o -> ((Enum<?>) o).name()).toList();
    }
}
