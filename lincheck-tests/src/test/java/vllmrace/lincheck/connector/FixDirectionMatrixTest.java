package vllmrace.lincheck.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import vllmrace.races.connector.SeedThreeInvariant;

/**
 * Seed 003's fix-direction matrix, computed by Lincheck, against the expected matrix. Columns: engine alive, no write
 * into a freed block, no leak, exactly one terminal transfer event. The catalogue's expected shape is confirmed:
 * (3) alone keeps the engine alive but still lets the pull write into freed blocks. Beyond it: (2) alone does NOT
 * keep the engine alive (a late recv landing while R runs fails {@code assert RequestStatus.is_finished}); only (1)
 * gives exactly one transfer event.
 */
class FixDirectionMatrixTest {

    /** dedup, pin, skip | alive, noBadWrite, noLeak, oneEvent. Order: FixDirectionMatrix.compute's. */
    private static final boolean[][] EXPECTED = {
            // (1)    (2)    (3)     alive  noWrite noLeak oneEvent
            {false, false, false, false, false, true, false},
            {true, false, false, true, true, true, true},
            {false, true, false, false, true, true, false},
            {true, true, false, true, true, true, true},
            {false, false, true, true, false, true, false},
            {true, false, true, true, true, true, true},
            {false, true, true, true, true, true, false},
            {true, true, true, true, true, true, true},
    };

    /** Opt-in ({@code -Dvllmrace.connector.lincheckMatrix=true}): 32 Lincheck model checks, several minutes. */
    @Test
    @EnabledIfSystemProperty(named = "vllmrace.connector.lincheckMatrix", matches = "true")
    void lincheckMatrixIsTheExpectedOne() {
        assertMatrix(FixDirectionMatrix.compute());
    }

    @Test
    void exhaustiveMatrixIsTheExpectedOne() {
        assertMatrix(FixDirectionMatrix.computeExhaustive());
    }

    private static void assertMatrix(List<FixDirectionMatrix.Row> rows) {
        assertEquals(8, rows.size());
        List<String> mismatches = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            FixDirectionMatrix.Row row = rows.get(i);
            boolean[] e = EXPECTED[i];
            assertEquals(List.of(e[0], e[1], e[2]), List.of(row.loadDedup(), row.pinPullBlocks(), row.skipLateReport()));
            SeedThreeInvariant[] invariants = SeedThreeInvariant.values();
            for (int j = 0; j < invariants.length; j++) {
                if (row.holds(invariants[j]) != e[3 + j]) {
                    mismatches.add("row " + i + " " + row.fixes() + ": " + invariants[j] + " expected " + e[3 + j]);
                }
                assertTrue(row.invocations().get(invariants[j]) > 0, "vacuous cell");
            }
        }
        assertTrue(mismatches.isEmpty(), String.join("\n", mismatches) + "\n" + FixDirectionMatrix.toMarkdown(rows));
        System.out.println(FixDirectionMatrix.toMarkdown(rows));
    }
}
