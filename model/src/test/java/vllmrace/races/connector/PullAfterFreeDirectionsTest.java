package vllmrace.races.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.races.Race;
import vllmrace.races.connector.DirectionTable.Cell;
import vllmrace.races.connector.PullAfterFreeDirections.Direction;

/**
 * Seed 003's directions and the fourth ("the late READ fails") against the decode side's and the prefill side's read
 * or write after a free, over every step-level interleaving: no one direction closes both.
 */
class PullAfterFreeDirectionsTest {

    @Test
    void everyDirectionClosesExactlyTheExpectedSide() {
        List<Cell> cells = PullAfterFreeDirections.TABLE.compute();
        assertEquals(List.of(), PullAfterFreeDirections.TABLE.mismatches(cells));
        for (Cell cell : cells) {
            assertTrue(cell.interleavings() > 1, cell + ": more than one interleaving must run");
        }
        for (Direction d : List.of(Direction.LOAD_DEDUP, Direction.PIN_PULL, Direction.SKIP_LATE, Direction.DECLINE_LATE)) {
            assertTrue(cells.stream().filter(c -> c.direction() == d).anyMatch(c -> !c.clean()), d + " alone closes both sides");
        }
        assertTrue(PullAfterFreeDirections.TABLE.toMarkdown(cells).contains("it matches."));
    }

    /** The comparison is not blind: flipping any one cell is reported, and so is a vacuous or a missing cell. */
    @Test
    void everyCellIsCompared() {
        List<Cell> expected = new ArrayList<>();
        for (Direction d : Direction.values()) {
            for (Race r : PullAfterFreeDirections.RACES) {
                expected.add(new Cell(d, r, PullAfterFreeDirections.expectedClean(d, r) ? 0 : 1, 2));
            }
        }
        assertEquals(List.of(), PullAfterFreeDirections.TABLE.mismatches(expected));
        for (int i = 0; i < expected.size(); i++) {
            List<Cell> flipped = new ArrayList<>(expected);
            Cell c = expected.get(i);
            flipped.set(i, new Cell(c.direction(), c.race(), c.clean() ? 1 : 0, 2));
            assertEquals(1, PullAfterFreeDirections.TABLE.mismatches(flipped).size(), "cell " + i);
            List<Cell> vacuous = new ArrayList<>(expected);
            vacuous.set(i, new Cell(c.direction(), c.race(), 0, 0));
            assertEquals(1, PullAfterFreeDirections.TABLE.mismatches(vacuous).size(), "vacuous cell " + i);
        }
        assertEquals(1, PullAfterFreeDirections.TABLE.mismatches(expected.subList(1, expected.size())).size(), "a missing cell");
    }
}
