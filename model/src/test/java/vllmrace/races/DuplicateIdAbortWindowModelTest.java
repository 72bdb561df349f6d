package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.detect.ViolationKind;
import vllmrace.races.frontend.DuplicateIdAbortWindowScenario;
import vllmrace.races.frontend.DuplicateIdAbortWindowScenario.Outcome;

/**
 * The DuplicateIdAbortWindow scenario driven step by step on one thread: every actor schedule of the two
 * coroutines, so the model's own classification is pinned down independently of JCStress and Lincheck.
 */
class DuplicateIdAbortWindowModelTest {
    private static final Race RACE = Race.DuplicateIdAbortWindow;

    private static Outcome replay(Variant variant, Integer... schedule) {
        StringBuilder actors = new StringBuilder();
        java.util.Arrays.stream(schedule).forEach(actors::append);
        return (Outcome) Schedule.of(actors.toString()).run(RACE.scenario(variant), false).outcome();
    }

    @Test
    void reportedAbortDropsStateBeforeSendingAbort_reAddOvertakesIt() {
        // abort pops X | add passes its check, sends ADD | abort sends ABORT
        assertEquals(Outcome.DUPLICATE_LIVE_ID, replay(Variant.REPORTED, 1, 2, 2, 1));
    }

    @Test
    void reportedSequentialOrdersAreClean() {
        assertEquals(Outcome.READDED_AFTER_ABORT, replay(Variant.REPORTED, 1, 1, 2, 2));
        assertEquals(Outcome.READD_REJECTED, replay(Variant.REPORTED, 2, 2, 1, 1));
    }

    @Test
    void fixedNeverShowsTheDuplicateUnderAnySchedule() {
        // every interleaving of abort's 3 steps with add's 2 steps
        for (int mask = 0; mask < 32; mask++) {
            if (Integer.bitCount(mask) != 2) {
                continue;
            }
            Integer[] schedule = new Integer[5];
            for (int i = 0; i < 5; i++) {
                schedule[i] = (mask >> i & 1) == 1 ? 2 : 1;
            }
            Outcome outcome = replay(Variant.FIXED, schedule);
            assertFalse(outcome.violation(), java.util.Arrays.toString(schedule) + " gave " + outcome);
        }
    }

    @Test
    void theRaceBreaksFe1Fe2AndFe3() {
        RaceScenario scenario = RACE.scenario(Variant.REPORTED);
        scenario.actor1().runNextStep();
        scenario.actor2().run();
        scenario.actor1().run();
        assertEquals(Outcome.DUPLICATE_LIVE_ID, scenario.arbiter());
        List<ViolationKind> kinds = scenario.violations().stream().map(v -> v.kind()).toList();
        assertEquals(List.of(ViolationKind.DUPLICATE_LIVE_REQUEST, ViolationKind.ABORT_HIT_WRONG_REQUEST,
                ViolationKind.ORPHANED_FRONTEND_REQUEST), kinds);
    }

    @Test
    void strictReplayOfARecordedLogReproducesIt() {
        RaceScenario recorded = RACE.scenario(Variant.REPORTED);
        recorded.actor1().runNextStep();
        recorded.actor2().run();
        recorded.actor1().run();
        recorded.arbiter();
        List<String> steps = recorded.stepLog().entriesSince(recorded.setupSteps());
        Schedule.Result again = Schedule.fromSteps(recorded, steps).run(RACE.scenario(Variant.REPORTED), true);
        assertEquals(steps, again.steps());
        assertTrue(again.outcome().violation());
    }

    @Test
    void scenarioSetUpLeavesXRunning() {
        DuplicateIdAbortWindowScenario scenario = (DuplicateIdAbortWindowScenario) RACE.scenario(Variant.FIXED);
        assertEquals("X-1@1[RUNNING]", scenario.vllm().scheduler().getRequest("X-1").toString()); // UNIQUE_INTERNAL_IDS
        assertTrue(scenario.violations().isEmpty());
    }
}
