package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.deploy.Profile;
import vllmrace.model.sched.SchedulerKind;

/**
 * Every race re-judged under the sync {@code Scheduler} (one batch in flight), every step interleaving of its reported
 * variant at every point of its family: where {@link Race#occursUnder} says it occurs there, some interleaving shows it;
 * where it says not, the scenario's set-up state cannot be reached or every interleaving is clean. No interleaving ends in
 * a modelling error either way. (The AsyncScheduler, upstream's default, is what every engine's reported cells run.)
 */
class SchedulerKindTest {
    private static final Configuration SYNC = Profile.MAIN_SYNC_SCHEDULING.configuration();

    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void theReportedVariantUnderTheSyncSchedulerAgreesWithOccursUnder(Race race) {
        assertEquals(SchedulerKind.SCHEDULER, SYNC.schedulerKind());
        assertTrue(race.occursUnder(SchedulerKind.ASYNC_SCHEDULER), race + ": every race is reported under upstream's default");
        if (race.expected(Variant.REPORTED) == Expectation.NOT_APPLICABLE) {
            return; // a positive control has no reported variant
        }
        boolean occurs = race.occursUnder(SchedulerKind.SCHEDULER);
        int violating = 0;
        int unreachable = 0;
        for (Params point : race.grid()) {
            Map<RaceOutcome, Integer> outcomes;
            try {
                outcomes = AllInterleavings.outcomes(() -> race.scenario(race.fixes(Variant.REPORTED), SYNC.withYields(race.needsYield()), point));
            } catch (IllegalStateException e) {
                assertTrue(e.getMessage().startsWith("set-up: ") && !occurs, race + " at " + point + ": " + e.getMessage());
                unreachable++;
                continue;
            }
            assertFalse(outcomes.isEmpty(), race + " at " + point + ": nothing ran");
            assertTrue(outcomes.keySet().stream().noneMatch(RaceOutcome::modellingError),
                    race + " at " + point + " under the sync Scheduler ended in a modelling error: " + outcomes);
            violating += outcomes.entrySet().stream().filter(e -> e.getKey().violation()).mapToInt(Map.Entry::getValue).sum();
        }
        if (occurs) {
            assertTrue(violating > 0, race + " is declared to occur under the sync Scheduler, but no interleaving of its reported "
                    + "variant shows it");
        } else {
            assertEquals(0, violating, race + " is declared AsyncScheduler only, but the sync Scheduler shows it");
            assertTrue(unreachable <= race.grid().size());
        }
    }
}
