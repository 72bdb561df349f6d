package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.evidence.ResultsDir;

/**
 * The fix-switch matrix, computed in this run (every step interleaving, every column) by the code the catalogue uses:
 * every race is closed with every fix ON, its {@code main} cell is its vLLM-main expectation, and no cell ends in a
 * modelling error. Every cell's counts of violating schedules per invariant must also be the ones the last catalogue
 * run wrote to results/fix-matrix.tsv: a change in how any fix behaves, even one that keeps every verdict, shows up
 * as a changed cell, and passes only once the catalogue is re-run and its diff reviewed.
 */
class FixMatrixTest {

    static java.util.stream.Stream<Race> races() {
        return Cells.races(Shard.current()).stream();
    }

    /** results/fix-matrix.tsv: (race, column) -> figures. */
    private static Map<List<String>, String> lastCatalogueRun() throws IOException {
        Map<List<String>, String> cells = new HashMap<>();
        Path tsv = ResultsDir.get().resolve("fix-matrix.tsv");
        for (String line : Files.readAllLines(tsv).subList(1, Files.readAllLines(tsv).size())) {
            String[] row = line.split("\t", -1);
            cells.put(List.of(row[0], row[1]), row[3]);
        }
        return cells;
    }

    @ParameterizedTest(name = "{0} [fix-switch matrix]", allowZeroInvocations = true)
    @MethodSource("races")
    void everyRaceIsClosedWithAllFixesAndItsMainCellIsItsVllmMainVerdict(Race race) throws IOException {
        Map<List<String>, String> last = lastCatalogueRun();
        for (FixMatrix.Cell cell : FixMatrix.row(race)) {
            assertNotEquals(Observed.HARNESS_ERROR, cell.observed(), race + " " + cell.column() + ": " + cell.figures());
            if (cell.expected() != null) {
                assertEquals(cell.expected().name(), cell.observed().name(), race + " with " + cell.column() + ": " + cell.figures());
            }
            String before = last.get(List.of(race.name(), cell.column()));
            assertTrue(before != null, race + " " + cell.column() + " has no row in results/fix-matrix.tsv: run ./catalogue " + race);
            assertEquals(before, cell.figures(), race + " with fixes " + cell.column() + ": the matrix cell changed. If the "
                    + "change is intended, run ./catalogue " + race + " and review the diff of results/fix-matrix.tsv");
        }
        assertEquals(FixMatrix.columns().size(), FixMatrix.row(race).size());
    }
}
