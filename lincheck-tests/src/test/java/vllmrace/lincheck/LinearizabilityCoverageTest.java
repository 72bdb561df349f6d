package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.detect.ViolationKind;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;

/** The race registry and the linearizability checks agree: every race is in its component's check, or liveness-only. */
class LinearizabilityCoverageTest {

    @Test
    void everyRaceIsInExactlyOneCheckOfItsOwnComponentOrIsLivenessOnly() {
        for (Race race : Race.values()) {
            List<LinearizabilityCheck> in = new ArrayList<>();
            for (LinearizabilityCheck check : LinearizabilityCheck.values()) {
                if (check.races().contains(race)) {
                    in.add(check);
                }
            }
            boolean liveness = LinearizabilityCheck.LIVENESS_ONLY.containsKey(race);
            assertEquals(liveness ? 0 : 1, in.size(), race + " is in " + in + (liveness ? " and liveness-only" : ""));
            if (!liveness) {
                assertEquals(race.component(), in.get(0).component(), race + " is checked outside its component");
            }
        }
    }

    @Test
    void aLivenessOnlyRaceDeclaresOnlyLivenessDetectorsAndSaysWhy() {
        LinearizabilityCheck.LIVENESS_ONLY.forEach((race, why) -> {
            assertTrue(why.startsWith("LV"), race + ": the reason names its liveness detector: " + why);
            for (RaceOutcome outcome : race.outcomes()) {
                for (ViolationKind kind : outcome.declaredDetectors()) {
                    assertTrue(kind.invariant().startsWith("LV"), race + " declares " + kind + " (" + kind.invariant()
                            + "): a safety invariant belongs in a linearizability check");
                    assertTrue(why.contains(kind.invariant()), race + "'s reason names " + kind.invariant() + ": " + why);
                }
            }
        });
    }

    @Test
    void theOperationAndActionListsOfACheckAreDisjoint() {
        for (LinearizabilityCheck check : LinearizabilityCheck.values()) {
            List<Race> both = new ArrayList<>(check.operationRaces());
            both.retainAll(check.actionRaces());
            assertTrue(both.isEmpty(), check + " lists " + both + " twice");
            assertFalse(check.operationRaces().isEmpty(), check + " has no race in its operation set");
        }
    }
}
