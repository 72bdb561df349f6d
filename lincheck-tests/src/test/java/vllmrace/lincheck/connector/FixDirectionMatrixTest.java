package vllmrace.lincheck.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import vllmrace.races.Shard;
import vllmrace.lincheck.connector.FixDirectionMatrix.Combination;
import vllmrace.lincheck.connector.FixDirectionMatrix.Row;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.races.connector.SeedThreeInvariant;

/**
 * Seed 003's fix-direction matrix against the expected one ({@link FixDirectionMatrix#EXPECTED}), computed both by
 * Lincheck (one bounded model-checking run per combination) and over every step-level interleaving. Columns: engine
 * alive, no write into a freed block, no leak, exactly one terminal transfer event. A change in any fix direction's
 * behaviour shows up as a failing cell.
 */
class FixDirectionMatrixTest {

    @org.junit.jupiter.api.BeforeAll
    static void inThisShard() {
        org.junit.jupiter.api.Assumptions.assumeTrue(FixDirectionMatrix.inShard(Shard.current()), "the seed 003 matrix is another shard's");
    }

    @Test
    void lincheckMatrixIsTheExpectedOne() {
        int budget = LincheckRun.scaled(FixDirectionMatrix.COMBINATION_BUDGET);
        List<Row> rows = FixDirectionMatrix.compute(budget);
        for (Row row : rows) {
            // compute() already checked that every invocation Lincheck built reached the arbiter
            assertTrue(row.invocations() > 0 && row.invocations() <= budget, row.combination() + ": " + row.invocations() + " invocations");
            assertTrue(row.distinctSchedules() > 0, row.combination() + ": no step interleaving recorded");
        }
        assertMatrix(rows);
    }

    @Test
    void exhaustiveMatrixIsTheExpectedOne() {
        List<Row> rows = FixDirectionMatrix.computeExhaustive();
        long interleavings = FixDirectionMatrix.stepInterleavings();
        for (Row row : rows) {
            assertEquals(interleavings, row.invocations(), row.combination() + ": not every step interleaving ran");
        }
        assertMatrix(rows);
    }

    /** The comparison is not blind: a matrix built from EXPECTED matches, and flipping any one cell is reported. */
    @Test
    void everyCellIsCompared() {
        assertEquals(List.of(), FixDirectionMatrix.mismatches(rowsFromExpected(-1, null)));
        int rowCount = FixDirectionMatrix.EXPECTED.size();
        for (int i = 0; i < rowCount; i++) {
            for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
                List<String> mismatches = FixDirectionMatrix.mismatches(rowsFromExpected(i, invariant));
                assertEquals(1, mismatches.size(), "row " + i + ", " + invariant + ": " + mismatches);
            }
        }
    }

    /** Rows exactly as expected, except the cell ({@code flipRow}, {@code flip}) inverted. */
    private static List<Row> rowsFromExpected(int flipRow, SeedThreeInvariant flip) {
        List<Row> rows = new ArrayList<>();
        List<Combination> combinations = Combination.all();
        for (int i = 0; i < combinations.size(); i++) {
            Map<SeedThreeInvariant, Long> violating = new EnumMap<>(SeedThreeInvariant.class);
            for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
                boolean holds = FixDirectionMatrix.EXPECTED.get(i).get(invariant) ^ (i == flipRow && invariant == flip);
                violating.put(invariant, holds ? 0L : 1L);
            }
            rows.add(new Row(combinations.get(i), violating, 1, 1));
        }
        return rows;
    }

    private static void assertMatrix(List<Row> rows) {
        FixDirectionsReport report = new FixDirectionsReport(0, rows, rows, List.of(), List.of());
        List<String> mismatches = FixDirectionMatrix.mismatches(rows);
        assertTrue(mismatches.isEmpty(), String.join("\n", mismatches) + "\n" + report.toMarkdown());
        for (Row row : rows) {
            System.out.println(row);
        }
    }
}
