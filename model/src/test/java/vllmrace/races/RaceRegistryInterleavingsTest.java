package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The premise every engine relies on, checked for every race of the registry over EVERY schedule of its two actors
 * (one thread, exhaustive at step granularity). Reported: both sequential orders are clean and some interleaving
 * violates the invariant, so the finding is a race and Lincheck can flag it against the sequential specification
 * (a scenario whose sequential order already fails would make Lincheck's counterexample meaningless). Fixed: no
 * schedule violates it. No schedule of either variant is a modelling error.
 */
class RaceRegistryInterleavingsTest {

    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void reportedRacesOnlyInAnInterleavingAndFixedNever(Race race) {
        Map<String, RaceOutcome> fixed = AllInterleavings.bySchedule(() -> race.scenario(Variant.FIXED));
        assertTrue(fixed.values().stream().noneMatch(RaceOutcome::violation), race + " fixed: " + fixed);
        if (race.expected(Variant.REPORTED) != Expectation.BUG_FOUND) {
            return;
        }
        Map<String, RaceOutcome> reported = AllInterleavings.bySchedule(() -> race.scenario(Variant.REPORTED));
        List<RaceOutcome> sequential = AllInterleavings.sequentialOutcomes(reported);
        assertFalse(sequential.get(0).violation(), race + ": actor 1 then actor 2 already violates: " + reported);
        assertFalse(sequential.get(1).violation(), race + ": actor 2 then actor 1 already violates: " + reported);
        assertTrue(reported.values().stream().anyMatch(RaceOutcome::violation), race + ": no interleaving races: " + reported);
        for (Map<String, RaceOutcome> variant : List.of(reported, fixed)) {
            assertTrue(variant.values().stream().noneMatch(o -> ((Enum<?>) o).name().equals("UNEXPECTED")), race + ": " + variant);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void everyOutcomeSaysWhetherItIsAViolationAndWhatItMeans(Race race) {
        for (RaceOutcome outcome : race.outcomes()) {
            assertFalse(outcome.meaning().isBlank(), race + " " + outcome); // throws unless exactly one of @Violating / @Clean
        }
        assertTrue(java.util.Arrays.stream(race.outcomes()).anyMatch(RaceOutcome::violation), race + " has no violating outcome");
        assertTrue(java.util.Arrays.stream(race.outcomes()).anyMatch(o -> !o.violation()), race + " has no clean outcome");
    }
}
