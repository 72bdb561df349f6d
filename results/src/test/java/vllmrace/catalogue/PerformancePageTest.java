package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.catalogue.BenchTable.Cell;
import vllmrace.catalogue.BenchTable.Fixed;
import vllmrace.catalogue.BenchTable.Run;
import vllmrace.catalogue.BenchTable.Tool;
import vllmrace.races.HarnessFault;
import vllmrace.races.Race;
import vllmrace.races.Subject;
import vllmrace.races.Variant;

/** The bench's page and plot from a table of made-up runs: every claim follows the figures; an error is never a find. */
class PerformancePageTest {

    private static Cell found(double... millis) {
        List<Run> runs = new java.util.ArrayList<>();
        for (double m : millis) {
            runs.add(m < 0 ? Run.notFound(1000, 10_000, "not found in 1,000 iterations") : Run.found(3, m, "LEAK"));
        }
        return new Cell(runs, null);
    }

    private static BenchTable table() {
        BenchTable t = new BenchTable();
        // A: the enumerator 2 ms, Lincheck 1.5 s (misses 1 s by 500 ms), the loop 40 ms (beats Lincheck)
        t.put(Race.AbortedLoadLeak, Tool.ENUMERATOR, found(2, 1, 3));
        t.put(Race.AbortedLoadLeak, Tool.LINCHECK, found(1500, 1400, 1600));
        t.put(Race.AbortedLoadLeak, Tool.LOOP, found(40, 30, 50));
        // B: the enumerator 20 ms (misses 10 ms), Lincheck 200 ms, the loop finds it in 1 of 3 runs only
        t.put(Race.AbortLosesToFinalStep, Tool.ENUMERATOR, found(20, 20, 20));
        t.put(Race.AbortLosesToFinalStep, Tool.LINCHECK, found(200, 200, 200));
        t.put(Race.AbortLosesToFinalStep, Tool.LOOP, found(-1, 9_000, -1));
        t.put(Race.AbortLosesToFinalStep, Tool.JCSTRESS, new Cell(List.of(Run.error(10, 1000, "harness error: modelling error")), null));
        t.putFixed(Race.AbortedLoadLeak, Tool.ENUMERATOR, new Fixed(Run.notFound(15, 4, "clean"), "all 15 interleavings, counted", true));
        t.putFixed(Race.AbortedLoadLeak, Tool.LOOP, new Fixed(Run.notFound(500, 2000, "clean"), "500 iterations (sampling)", false));
        t.notRun.put(Tool.FRAY_POS, "no JDK 25 (fray-tests/bench exited 4)");
        t.notRun.put(Tool.FRAY_PCT, "no JDK 25 (fray-tests/bench exited 4)");
        return t;
    }

    private static PerformancePage.Meta meta() {
        PerformancePage.Meta m = new PerformancePage.Meta(3, 10, 2);
        m.when = "2026-01-01T00:00:00Z";
        return m;
    }

    @Test
    void mediansRatiosAndTheBestEngineAreComputed() {
        BenchTable t = table();
        assertEquals(2, t.cell(Race.AbortedLoadLeak, Tool.ENUMERATOR).medianMillis());
        assertEquals(750, t.ratioToEnumerator(Race.AbortedLoadLeak, Tool.LINCHECK));
        assertEquals(Tool.ENUMERATOR, t.best(Race.AbortedLoadLeak));
        assertFalse(t.cell(Race.AbortLosesToFinalStep, Tool.LOOP).found(), "found in 1 of 3 runs: no median");
        assertTrue(Double.isNaN(t.cell(Race.AbortLosesToFinalStep, Tool.JCSTRESS).medianMillis()), "an error is not a time");
        // Lincheck: 750 (A) and 10 (B): median 380
        assertEquals(380, t.medianRatio(Tool.LINCHECK));
        assertEquals(2.5, BenchTable.median(List.of(1.0, 4.0, 2.0, 3.0)));
    }

    @Test
    void thePageSaysWhatMissesAndWhoBeatsWhom() {
        String page = new PerformancePage(table(), meta()).render();
        assertTrue(page.contains("Every reported race found by the best engine within 100 ms after warm-up: **met** (2 of 2)"), page);
        assertTrue(page.contains("Lincheck within 1 s each after warm-up: **missed** by 1 of 2: AbortedLoadLeak (1.50 s, 500 ms over)"), page);
        assertTrue(page.contains("The enumerator within 10 ms per race-variant: **missed** by 1 of 3: AbortLosesToFinalStep reported (20.0 ms)"), page);
        assertTrue(page.contains("- AbortedLoadLeak: stress loop (40.0 ms) beats Lincheck (1.50 s)"), page);
        assertTrue(page.contains("Races a peer finds faster than Lincheck: AbortedLoadLeak (stress loop)."), page);
        assertTrue(page.contains("**Fray: not run (no JDK 25 (fray-tests/bench exited 4)).**"), page);
        assertTrue(page.contains("| stress loop | ×20 | 1 | AbortLosesToFinalStep (2 of 3 runs) (in 10 s) |"), page);
        assertTrue(page.contains("not found in 10 s (found in 1 of 3)"), page);
        assertTrue(page.contains("- AbortLosesToFinalStep [JCStress, reported]: harness error: modelling error"), page);
        assertTrue(page.contains("| AbortedLoadLeak | enumerator | all 15 interleavings, counted | 4.0 ms | yes |"), page);
        assertTrue(page.contains("| AbortedLoadLeak | stress loop | 500 iterations (sampling) | 2.00 s | no |"), page);
        assertFalse(page.contains("JCStress (1.00 s)"), "an errored engine is never beaten on a time it does not have");
    }

    @Test
    void thePlotHasARowPerRaceAndMarksWhatWasNotFound() {
        String svg = PerformancePlot.svg(table(), meta());
        assertTrue(svg.startsWith("<svg") && svg.strip().endsWith("</svg>"));
        assertTrue(svg.contains(">AbortedLoadLeak</text>") && svg.contains(">AbortLosesToFinalStep</text>"), svg);
        assertTrue(svg.contains("fill=\"none\" stroke=\"" + PerformancePlot.COLOURS[Tool.LOOP.ordinal()] + "\""), "a hollow loop marker");
        assertTrue(svg.contains("Fray POS (not run)"));
        assertTrue(svg.contains(">1 ms</text>") && svg.contains(">10 s</text>"), "decades from 1 ms to the loop's bound");
    }

    @Test
    void frayRowsBecomeCellsAndAModellingErrorIsAnError() throws IOException, FrayTsv.FormatException {
        String text;
        try (InputStream in = getClass().getResourceAsStream("fray-bench.tsv")) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        BenchTable t = new BenchTable();
        BenchCommand.putFray(t, FrayTsv.parse(text.lines().toList()));
        assertEquals(175, t.cell(Race.AbortedLoadLeak, Tool.FRAY_POS).medianMillis());
        assertEquals(380, t.cell(Race.AbortedLoadLeak, Tool.FRAY_PCT).medianMillis());
        assertTrue(t.cell(Race.AbortLosesToFinalStep, Tool.FRAY_PCT).firstError() != null);
        assertFalse(t.cell(Race.AbortLosesToFinalStep, Tool.FRAY_PCT).found());
        assertEquals(3100, t.fixed.get(Race.AbortedLoadLeak).get(Tool.FRAY_POS).run().millis());
    }

    @Test
    void theLoopAndTheEnumeratorCallABrokenRunAnErrorNeverAFind() throws InterruptedException {
        Subject broken = HarnessFault.ACTOR_RAISES.on(Subject.of(Race.AbortedLoadLeak, Variant.REPORTED));
        Run loop = BenchCommand.loop(broken, 5_000);
        assertEquals(BenchTable.Status.ERROR, loop.status(), loop.toString());
        assertEquals(1, loop.count());
        Run enumerator = BenchCommand.enumerator(broken);
        assertEquals(BenchTable.Status.ERROR, enumerator.status(), enumerator.toString());
        Run honest = BenchCommand.enumerator(Subject.of(Race.AbortedLoadLeak, Variant.REPORTED));
        assertEquals(BenchTable.Status.FOUND, honest.status(), honest.toString());
    }
}
