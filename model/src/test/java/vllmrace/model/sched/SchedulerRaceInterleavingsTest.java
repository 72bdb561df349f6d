package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.Fix;
import vllmrace.races.AllInterleavings;
import vllmrace.races.Component;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RaceScenario;
import vllmrace.races.Schedule;
import vllmrace.races.Variant;
import vllmrace.races.scheduler.AbortLosesToFinalStepScenario;
import vllmrace.races.scheduler.AbortOfFinishedDelayFreedScenario;
import vllmrace.races.scheduler.AbortedLoadFreesBlocksScenario;
import vllmrace.races.scheduler.AbortedLoadLeakScenario;
import vllmrace.races.scheduler.DoubleFreeOnAbortedAsyncSaveScenario;

/**
 * Every scheduler race's scenario under EVERY interleaving of its two actors, on one thread: the model's own
 * classification, independent of JCStress and Lincheck. For each race: as reported, some interleaving breaks the
 * invariant while both sequential orders are clean (so the violation is a race, and Lincheck can flag it against
 * the sequential specification); fixed, no interleaving breaks it and every outcome is one a sequential order
 * gives (so the fixed variant is linearizable, not merely violation-free).
 */
class SchedulerRaceInterleavingsTest {

    private static Set<String> sequentialOutcomes(Map<Schedule, RaceOutcome> all) {
        return AllInterleavings.sequentialOutcomes(all).stream().map(SchedulerRaceInterleavingsTest::name)
                .collect(Collectors.toSet());
    }

    private static String name(RaceOutcome outcome) {
        return ((Enum<?>) outcome).name();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Race.class, names = {"DoubleFreeOnAbortedAsyncSave", "AbortOfFinishedDelayFreed",
            "AbortLosesToFinalStep", "AbortedLoadFreesBlocks", "AbortedLoadLeak"})
    void reportedRacesFixedDoesNot(Race race) {
        assertEquals(Component.SCHEDULER, race.component());
        Map<Schedule, RaceOutcome> reported = AllInterleavings.bySchedule(() -> race.scenario(Variant.REPORTED));
        Map<Schedule, RaceOutcome> fixed = AllInterleavings.bySchedule(() -> race.scenario(Variant.FIXED));
        String both = race + "\n reported " + reported + "\n fixed " + fixed;

        Set<String> sequentialReported = sequentialOutcomes(reported);
        assertTrue(sequentialReported.stream().noneMatch(n -> race.outcome(n).violation()), "sequential orders must be clean: " + both);
        assertTrue(reported.values().stream().anyMatch(RaceOutcome::violation), "the reported variant never races: " + both);
        assertTrue(reported.values().stream().noneMatch(RaceOutcome::modellingError), both);

        Set<String> sequentialFixed = sequentialOutcomes(fixed);
        for (Map.Entry<Schedule, RaceOutcome> run : fixed.entrySet()) {
            assertFalse(run.getValue().violation(), "fixed, schedule " + run.getKey() + ": " + both);
            assertTrue(sequentialFixed.contains(name(run.getValue())), "fixed, schedule " + run.getKey()
                    + " gave an outcome no sequential order gives: " + both);
        }
        System.out.println(both);
    }

    private static List<ViolationKind> kinds(RaceScenario scenario) {
        return scenario.violations().stream().map(v -> v.kind()).collect(Collectors.toList());
    }

    /** A race's reported switches on upstream as it is: without seed 003's proposed skip of late reports. */
    private static RaceScenario upstreamReported(Race race) {
        return race.scenario(race.fixes(Variant.REPORTED).without(Fix.SCHEDULER_SKIP_LATE_REPORT));
    }

    @Test
    void doubleFreeBreaksSc3Sc1AndKillsTheEngine() {
        RaceScenario s = upstreamReported(Race.DoubleFreeOnAbortedAsyncSave);
        assertEquals(DoubleFreeOnAbortedAsyncSaveScenario.Outcome.FREED_TWICE, AllInterleavings.run(s, "2122222"));
        assertEquals(List.of(ViolationKind.OUTPUT_FOR_FINISHED_REQUEST, ViolationKind.DOUBLE_FREE_REQUEST,
                ViolationKind.LATE_TRANSFER_REPORT), kinds(s));
        RaceScenario skipping = Race.DoubleFreeOnAbortedAsyncSave.scenario(Variant.REPORTED);
        assertEquals(DoubleFreeOnAbortedAsyncSaveScenario.Outcome.FREED_TWICE, AllInterleavings.run(skipping, "2122222"));
        assertEquals(List.of(ViolationKind.OUTPUT_FOR_FINISHED_REQUEST, ViolationKind.DOUBLE_FREE_REQUEST), kinds(skipping),
                "seed 003's skip keeps the engine alive, the double free remains");
    }

    @Test
    void abortOfFinishedReFreesThenKeyError() {
        RaceScenario s = upstreamReported(Race.AbortOfFinishedDelayFreed);
        assertEquals(AbortOfFinishedDelayFreedScenario.Outcome.REFREED_THEN_KEYERROR, AllInterleavings.run(s, "22212222222"));
        assertEquals(List.of(ViolationKind.DOUBLE_FREE_REQUEST, ViolationKind.LATE_TRANSFER_REPORT), kinds(s));
    }

    @Test
    void abortLosesToFinalStepIsDetectedAtTheUpdate() {
        RaceScenario s = Race.AbortLosesToFinalStep.scenario(Variant.REPORTED);
        assertEquals(AbortLosesToFinalStepScenario.Outcome.ABORT_OVERTAKEN, AllInterleavings.run(s, "2122"));
        assertEquals(List.of(ViolationKind.ABORT_OVERTAKEN_BY_COMPLETION), kinds(s));
    }

    @Test
    void abortedLoadWritesIntoTheBlockR2Got() {
        RaceScenario s = Race.AbortedLoadFreesBlocks.scenario(Variant.REPORTED);
        assertEquals(AbortedLoadFreesBlocksScenario.Outcome.LOAD_WROTE_FREED_BLOCK, AllInterleavings.run(s, "21222222"));
        assertEquals(List.of(ViolationKind.WRITE_INTO_FREED_BLOCK), kinds(s));
        assertTrue(s.violations().get(0).detail().contains("reallocated"), s.violations().toString());
    }

    @Test
    void abortAfterRecvLeaksWithTheNaiveFlag() {
        RaceScenario s = Race.AbortedLoadLeak.scenario(Variant.REPORTED);
        assertEquals(AbortedLoadLeakScenario.Outcome.LEAK, AllInterleavings.run(s, "21222"));
        assertEquals(List.of(ViolationKind.DELAY_FREED_NEVER_RELEASED, ViolationKind.BLOCK_LEAK), kinds(s));
    }
}
