package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/** The Fray bench script's table, read back: its rows, a modelling error never a find, one line naming bad input. */
class FrayTsvTest {

    private static List<String> fixture() throws IOException {
        try (InputStream in = FrayTsvTest.class.getResourceAsStream("fray-bench.tsv")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }

    @Test
    void readsEveryRow() throws Exception {
        List<FrayTsv.Row> rows = FrayTsv.parse(fixture());
        assertEquals(5, rows.size());
        FrayTsv.Row first = rows.get(0);
        assertEquals(new FrayTsv.Row(Race.AbortedLoadLeak, Variant.REPORTED, "POS", 1, 3, 140, true, "LEAK"), first);
        assertTrue(first.foundRace());
        FrayTsv.Row fixed = rows.get(3);
        assertEquals(Variant.FIXED, fixed.variant());
        assertEquals(1000, fixed.iterations());
        assertFalse(fixed.foundRace());
    }

    @Test
    void aModellingErrorIsNeverAFindEvenWhenFoundSaysTrue() throws Exception {
        FrayTsv.Row broken = FrayTsv.parse(fixture()).get(4);
        assertTrue(broken.error());
        assertFalse(broken.foundRace());
    }

    @Test
    void theScriptsExitStatusSaysWhetherThereIsATable() {
        assertEquals(null, BenchCommand.frayRefusal(0, "fray: bench JVM wall time 9 ms (exit 0)"));
        assertEquals(null, BenchCommand.frayRefusal(1, "an exploration was a harness error"), "its rows say MODEL_ERROR");
        assertEquals("no JDK 25 (fray-tests/bench exited 4: fray: no JDK 25 found)", BenchCommand.frayRefusal(4, "fray: no JDK 25 found"));
        assertEquals("its build failed (fray-tests/bench exited 3)", BenchCommand.frayRefusal(3, ""));
        assertEquals("fray-tests/bench exited 2: fray: unknown race X", BenchCommand.frayRefusal(2, "fray: unknown race X"));
    }

    private static String refused(String... lines) {
        FrayTsv.FormatException e = assertThrows(FrayTsv.FormatException.class, () -> FrayTsv.parse(List.of(lines)));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        return e.getMessage();
    }

    @Test
    void badInputNamesItsLine() {
        assertTrue(refused("race variant").startsWith("line 1: expected the header"));
        assertEquals("line 2: no race 'NoSuchRace'", refused(FrayTsv.HEADER, "NoSuchRace\treported\tPOS\t1\t3\t140\ttrue\tLEAK"));
        assertEquals("line 2: scheduler is POS or PCT, got 'RANDOM'",
                refused(FrayTsv.HEADER, "AbortedLoadLeak\treported\tRANDOM\t1\t3\t140\ttrue\tLEAK"));
        assertEquals("line 2: millis is a whole number (0 or more), got '-1'",
                refused(FrayTsv.HEADER, "AbortedLoadLeak\treported\tPOS\t1\t3\t-1\ttrue\tLEAK"));
        assertEquals("line 2: 8 tab-separated columns expected, got 3", refused(FrayTsv.HEADER, "a\tb\tc"));
        assertEquals("line 2: found is true or false, got 'yes'",
                refused(FrayTsv.HEADER, "AbortedLoadLeak\treported\tPOS\t1\t3\t140\tyes\tLEAK"));
    }
}
