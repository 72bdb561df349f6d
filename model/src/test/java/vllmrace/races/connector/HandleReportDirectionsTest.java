package vllmrace.races.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.races.connector.DirectionTable.Cell;
import vllmrace.races.connector.HandleReportDirections.Direction;

/**
 * The three NIXL handle-report directions against SiblingHandleWritesAfterFailure and PushSendNeverReported, over every
 * step-level interleaving: each direction breaks exactly the cells {@link HandleReportDirections#expectedClean} says.
 */
class HandleReportDirectionsTest {

    @Test
    void everyDirectionBreaksExactlyTheExpectedRace() {
        List<Cell> cells = HandleReportDirections.compute();
        assertEquals(List.of(), HandleReportDirections.mismatches(cells));
        for (Cell cell : cells) {
            assertTrue(cell.interleavings() > 1, cell + ": more than one interleaving must run");
        }
        // PushSendNeverReported loses the report in every interleaving: the window is the environment's
        cells.stream().filter(c -> !c.clean() && c.race() == vllmrace.races.Race.PushSendNeverReported)
                .forEach(c -> assertEquals(c.interleavings(), c.violating(), c.toString()));
        assertTrue(HandleReportDirections.toMarkdown(cells).contains("it matches."));
    }

    /** The comparison is not blind: flipping any one cell is reported, and so is a vacuous cell. */
    @Test
    void everyCellIsCompared() {
        List<Cell> expected = new ArrayList<>();
        for (Direction d : Direction.values()) {
            for (vllmrace.races.Race r : HandleReportDirections.RACES) {
                expected.add(new Cell(d, r, HandleReportDirections.expectedClean(d, r) ? 0 : 1, 2));
            }
        }
        assertEquals(List.of(), HandleReportDirections.mismatches(expected));
        for (int i = 0; i < expected.size(); i++) {
            List<Cell> flipped = new ArrayList<>(expected);
            Cell c = expected.get(i);
            flipped.set(i, new Cell(c.direction(), c.race(), c.clean() ? 1 : 0, 2));
            assertEquals(1, HandleReportDirections.mismatches(flipped).size(), "cell " + i);
            List<Cell> vacuous = new ArrayList<>(expected);
            vacuous.set(i, new Cell(c.direction(), c.race(), 0, 0));
            assertEquals(1, HandleReportDirections.mismatches(vacuous).size(), "vacuous cell " + i);
        }
        assertEquals(1, HandleReportDirections.mismatches(expected.subList(1, expected.size())).size(), "a missing cell");
    }
}
