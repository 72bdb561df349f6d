package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The flake check's tally: what counts as a flip, the sample figures and the JCStress clean minimum it reports. */
class FlakinessTest {

    @Test
    void aCellThatPassesSomeRunsIsAFlipAndOneThatNeverPassesIsNamed() {
        FlakeCheck.Flakiness t = new FlakeCheck.Flakiness();
        t.add("R", "JCStress", "fixed", true, true, 5_000, 0, "5,000 samples, 0 violating");
        t.add("R", "JCStress", "fixed", true, false, 300, 0, "300 samples, 0 violating; below the floor");
        t.add("S", "every interleaving", "reported", false, false, 6, 0, "0 of all 6");
        t.add("S", "every interleaving", "reported", false, false, 6, 0, "0 of all 6");
        assertEquals(2, t.cells());
        assertEquals(3, t.failures());
        assertEquals(List.of("R [JCStress, fixed]: passed 1 of 2 (a flip); 300 samples, 0 violating; below the floor",
                "S [every interleaving, reported]: passed 0 of 2 (never); 0 of all 6"), t.flips());
        String page = t.page(2, "./catalogue --flake 2", "-m quick", 1_000);
        assertTrue(page.contains("2 cell(s) did not pass every run"), page);
        assertTrue(page.contains("| R | JCStress | fixed | 1 of 2 | 300 / 300 | 0 | no |"), page);
        // the failed run's 300 samples are not a clean verdict: the minimum counts passing runs only
        assertEquals("5,000 samples (R, fixed)", t.lowestJcstressClean());
    }

    @Test
    void passingEveryRunIsNoFlipAndTheFiguresAreMinMedianAndRate() {
        FlakeCheck.Flakiness t = new FlakeCheck.Flakiness();
        long[][] runs = {{10_000, 100}, {20_000, 100}, {40_000, 800}};
        for (long[] r : runs) {
            t.add("R", "JCStress", "reported", false, true, r[0], r[1], "figures " + r[0]);
            t.add("R", "every interleaving", "reported", false, true, 6, 2, "2 of all 6");
        }
        assertEquals(List.of(), t.flips());
        assertEquals(0, t.failures());
        String page = t.page(3, "./catalogue --flake 3", "-m quick", 60_000);
        assertTrue(page.contains("every cell passed every run"), page);
        assertTrue(page.contains("| R | JCStress | reported | 3 of 3 | 10,000 / 20,000 | 1.43% (runs 0.500% to 2.00%) | no |"), page);
        assertTrue(page.contains("| R | every interleaving | reported | 3 of 3 | 6 / 6 | 33.3% (runs 33.3% to 33.3%) | yes |"), page);
        assertEquals("none", t.lowestJcstressClean());
    }
}
