package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.evidence.ResultsDir;
import vllmrace.races.Expectation;
import vllmrace.races.Race;

/**
 * The fix-switch matrix the catalogue computed (results/fix-matrix.tsv) is complete, and every race is closed
 * with every fix ON (the cells the catalogue asserts; see Catalogue.matrixExpectation).
 * A change to any fix that breaks this shows up here, on the evidence a user reads.
 */
class FixMatrixTest {

    @Test
    void everyCellIsComputedAndEveryRaceIsClosedWithAllFixesOn() {
        Tsv matrix = new Tsv(ResultsDir.get().resolve("fix-matrix.tsv"), 2, "race", "fixes_on", "observed", "figures");
        for (Race race : Race.values()) {
            for (String column : Catalogue.matrixColumns()) {
                List<String> row = matrix.get(race.name(), column);
                assertNotNull(row, race + " has no fix-matrix cell '" + column + "': run ./catalogue " + race.name());
                Expectation expected = Catalogue.matrixExpectation(race, column);
                if (expected != null) {
                    assertEquals(expected.label(), row.get(2), race + " with fixes " + column + ": " + row.get(3));
                }
            }
        }
    }
}
