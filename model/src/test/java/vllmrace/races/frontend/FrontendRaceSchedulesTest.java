package vllmrace.races.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.AllInterleavings;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RaceScenario;
import vllmrace.races.Schedule;
import vllmrace.races.Variant;

/**
 * The frontend races under EVERY actor schedule (exhaustive, one thread): the reported variant shows its race in
 * exactly the expected interleaving and in no sequential order (so model checking can tell it from a sequential
 * outcome); the fixed variant, and each closing switch alone, is clean in every schedule.
 */
class FrontendRaceSchedulesTest {

    private static List<String> violating(Race race, FixSet fixes) {
        Map<Schedule, RaceOutcome> outcomes = AllInterleavings.bySchedule(() -> race.scenario(fixes));
        for (RaceOutcome outcome : outcomes.values()) {
            assertFalse(outcome.modellingError(), race + " " + fixes + ": " + outcomes);
        }
        return outcomes.entrySet().stream().filter(e -> e.getValue().violation()).map(e -> e.getKey().actors()).toList();
    }

    private static void assertSequentialOrdersClean(Race race, FixSet fixes) {
        List<RaceOutcome> sequential = AllInterleavings.sequentialOutcomes(AllInterleavings.bySchedule(() -> race.scenario(fixes)));
        assertFalse(sequential.get(0).violation(), race + " actor 1 then 2: " + sequential.get(0));
        assertFalse(sequential.get(1).violation(), race + " actor 2 then 1: " + sequential.get(1));
    }

    @Test
    void stopStringLateAbortReportedRacesOnlyWhenTheReAddFitsBetweenProcessOutputsAndTheAbortSend() {
        Race race = Race.StopStringLateAbort;
        // output handler: get_output_async + process_outputs (joined: a done await) | add_request: both steps (the race's
        // yields hold: an await before the send) | abort_requests_async after asyncio.sleep(0)
        assertEquals(List.of("1221"), violating(race, race.fixes(Variant.REPORTED)));
        assertSequentialOrdersClean(race, race.fixes(Variant.REPORTED));
    }

    @Test
    void stopStringLateAbortIsClosedByEachOfItsSwitchesAlone() {
        Race race = Race.StopStringLateAbort;
        assertEquals(List.of(), violating(race, race.fixes(Variant.FIXED)));
        assertEquals(List.of(), violating(race, race.fixes(Variant.REPORTED).with(Fix.ORDERED_FINISH_ABORT)));
        assertEquals(List.of(), violating(race, race.fixes(Variant.REPORTED).with(Fix.UNIQUE_INTERNAL_IDS)));
        assertEquals(List.of("1221"), violating(race, FixSet.none()));
    }

    @Test
    void delayFreedIdReuseIsFoundWithOrderedAbortOn() {
        Race race = Race.DelayFreedIdReuse;
        FixSet reported = race.fixes(Variant.REPORTED);
        assertTrue(reported.isOn(Fix.ORDERED_ABORT), "the point of the race: ordered abort is ON");
        // abort: flatten + send ABORT + drop state, one step (no await yields there upstream), then EngineCore's two
        // iterations | add_request: one step; the ADD sent before the second iteration takes its input (iteration 1
        // applies ABORT and then ADD, or ABORT alone and iteration 2 the ADD)
        assertEquals(List.of("1121", "1211"), violating(race, reported));
        assertSequentialOrdersClean(race, reported);
    }

    @Test
    void delayFreedIdReuseIsClosedByUniqueInternalIdsAndNotByOrderedAbort() {
        Race race = Race.DelayFreedIdReuse;
        assertEquals(List.of(), violating(race, race.fixes(Variant.FIXED)));
        assertEquals(List.of(), violating(race, race.fixes(Variant.FIXED).without(Fix.ORDERED_ABORT)));
    }

    @Test
    void duplicateIdAbortWindowIsClosedByEachOfItsSwitchesAlone() {
        Race race = Race.DuplicateIdAbortWindow;
        assertEquals(List.of("1221"), violating(race, race.fixes(Variant.REPORTED)));
        assertEquals(List.of(), violating(race, race.fixes(Variant.REPORTED).with(Fix.ORDERED_ABORT)));
        assertEquals(List.of(), violating(race, race.fixes(Variant.REPORTED).with(Fix.UNIQUE_INTERNAL_IDS)));
    }

    @Test
    void stopStringLateAbortBreaksFe1Fe2AndFe3() {
        RaceScenario scenario = Race.StopStringLateAbort.scenario(Variant.REPORTED);
        scenario.actor1().runNextStep(); // get_output_async + process_outputs; then asyncio.sleep(0) yields
        scenario.actor2().run();
        scenario.actor1().run();
        assertEquals(StopStringLateAbortScenario.Outcome.LATE_ABORT_KILLS_READD, scenario.arbiter());
        assertEquals(List.of(ViolationKind.DUPLICATE_LIVE_REQUEST, ViolationKind.ABORT_HIT_WRONG_REQUEST,
                ViolationKind.ORPHANED_FRONTEND_REQUEST), scenario.violations().stream().map(v -> v.kind()).toList());
        StopStringLateAbortScenario s = (StopStringLateAbortScenario) scenario;
        assertEquals(1, s.stoppedQueue().numFinalOutputs(), "X@1's caller got its stop output");
    }

    @Test
    void delayFreedIdReuseBreaksFe1WithTheAbortSentFirst() {
        RaceScenario scenario = Race.DelayFreedIdReuse.scenario(Variant.REPORTED);
        scenario.actor1().runNextStep(); // abort(X): flatten, ABORT sent, state dropped, all in one step
        scenario.actor2().run();
        scenario.actor1().run();
        assertEquals(DelayFreedIdReuseScenario.Outcome.COLLIDES_WITH_DELAY_FREED, scenario.arbiter());
        List<String> wire = scenario.stepLog().entriesSince(scenario.setupSteps()).stream()
                .filter(s -> s.startsWith("EngineCore: _handle_client_request")).toList();
        assertEquals(List.of("EngineCore: _handle_client_request(ABORT(X@1))", "EngineCore: _handle_client_request(ADD(X@2))"),
                wire, "the wire order #15326 asks for");
        assertEquals(ViolationKind.DUPLICATE_LIVE_REQUEST, scenario.violations().get(0).kind());
    }

    @Test
    void strictReplaysOfTheRecordedRacesReproduceThem() {
        for (Race race : List.of(Race.StopStringLateAbort, Race.DelayFreedIdReuse)) {
            String schedule = violating(race, race.fixes(Variant.REPORTED)).get(0);
            RaceScenario recorded = race.scenario(Variant.REPORTED);
            Schedule.Result first = Schedule.of(schedule).run(race.scenario(Variant.REPORTED), false);
            Schedule.Result again = Schedule.fromSteps(recorded, first.steps()).run(race.scenario(Variant.REPORTED), true);
            assertEquals(first.steps(), again.steps(), race.toString());
            assertTrue(again.outcome().violation(), race.toString());
        }
    }

    @Test
    void scenariosBuildBothActorsInTheConstructorWithoutRunningThem() {
        for (Race race : List.of(Race.StopStringLateAbort, Race.DelayFreedIdReuse)) {
            for (Variant variant : List.of(Variant.REPORTED, Variant.FIXED, Variant.UPSTREAM_MAIN)) {
                RaceScenario scenario = race.scenario(variant);
                assertFalse(scenario.actor1().isDone());
                assertFalse(scenario.actor2().isDone());
                assertEquals(scenario.setupSteps(), scenario.stepLog().size(), "set-up only so far");
                assertTrue(scenario.violations().isEmpty());
            }
        }
    }
}
