package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fix-switch matrix, computed in this run (every step interleaving, every column) by the code the catalogue uses:
 * every race is closed with every fix ON, its {@code main} cell is its vLLM-main expectation, and no cell ends in a
 * modelling error.
 */
class FixMatrixTest {

    static java.util.stream.Stream<Race> races() {
        return Cells.races(Shard.current()).stream();
    }

    @ParameterizedTest(name = "{0} [fix-switch matrix]", allowZeroInvocations = true)
    @MethodSource("races")
    void everyRaceIsClosedWithAllFixesAndItsMainCellIsItsVllmMainVerdict(Race race) {
        for (FixMatrix.Cell cell : FixMatrix.row(race)) {
            assertNotEquals(Observed.HARNESS_ERROR, cell.observed(), race + " " + cell.column() + ": " + cell.figures());
            if (cell.expected() != null) {
                assertEquals(cell.expected().name(), cell.observed().name(), race + " with " + cell.column() + ": " + cell.figures());
            }
        }
        assertEquals(FixMatrix.columns().size(), FixMatrix.row(race).size());
    }
}
