package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The enumerator's search for a first counterexample (the bench's figure): where it stops, what it counted. */
class FirstViolationTest {

    @Test
    void aReportedRaceStopsAtTheFirstViolatingScheduleOfTheEnumeration() {
        int checked = 0;
        for (Race race : Race.values()) {
            if (race.expected(Variant.REPORTED) != Expectation.BUG_FOUND) {
                continue;
            }
            Subject subject = Subject.of(race, Variant.REPORTED);
            AllInterleavings.FirstViolation first = AllInterleavings.firstViolation(subject::newScenario);
            assertTrue(first.found(), race + ": " + first);
            List<Map.Entry<Schedule, RaceOutcome>> all = List.copyOf(AllInterleavings.bySchedule(subject::newScenario).entrySet());
            int index = 0;
            while (!all.get(index).getValue().violation()) {
                index++;
            }
            assertEquals(index + 1, first.explored(), race.name());
            assertEquals(all.size(), first.total(), race.name());
            assertEquals(all.get(index).getKey(), first.schedule(), race.name());
            assertEquals(all.get(index).getValue(), first.outcome(), race.name());
            checked++;
        }
        assertTrue(checked > 10, "reported races checked: " + checked);
    }

    @Test
    void aFixedVariantRunsAndCountsEverySchedule() {
        Subject subject = Subject.of(Race.AbortedLoadLeak, Variant.FIXED);
        AllInterleavings.FirstViolation all = AllInterleavings.firstViolation(subject::newScenario);
        assertTrue(all.exhaustive(), all.toString());
        assertFalse(all.found());
        assertEquals(Schedule.all(subject.newScenario()).size(), all.explored());
        assertEquals(all.explored(), all.total());
        for (int[] n : new int[][] {{0, 0}, {1, 3}, {3, 4}, {6, 6}}) {
            assertEquals(Schedule.all(n[0], n[1]).size(), AllInterleavings.merges(n[0], n[1]), n[0] + "+" + n[1]);
        }
    }

    @Test
    void aBrokenRunIsAnErrorNeverAFind() {
        for (HarnessFault fault : HarnessFault.values()) {
            Subject subject = fault.on(Subject.of(Race.AbortedLoadLeak, Variant.REPORTED));
            AllInterleavings.FirstViolation first = AllInterleavings.firstViolation(subject::newScenario);
            assertNotNull(first.error(), fault + ": " + first);
            assertFalse(first.found(), fault.name());
            assertFalse(first.exhaustive(), fault.name());
        }
    }
}
