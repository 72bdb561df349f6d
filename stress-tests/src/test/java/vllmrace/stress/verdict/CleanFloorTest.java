package vllmrace.stress.verdict;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;
import vllmrace.races.derive.JcstressNames;

/**
 * The floor under a JCStress "clean": a run too short to have seen the race, at the rate its reported variant showed in
 * the same results, is inconclusive (which fails the build), never clean. Synthetic results, no JCStress launch.
 */
class CleanFloorTest {
    private static final Race RACE = Race.AbortLosesToFinalStep;
    private static final String CLEAN = "COMPLETED";
    private static final String RACE_SHOWN = "ABORT_OVERTAKEN";

    private static JcstressResults results(long reportedSamples, long reportedViolating, long fixedSamples) {
        Map<String, JcstressTestResult> byTest = new HashMap<>();
        if (reportedSamples > 0) {
            JcstressTestResult reported = new JcstressTestResult(JcstressNames.testName(RACE, Variant.REPORTED));
            reported.add(CLEAN, reportedSamples - reportedViolating);
            reported.add(RACE_SHOWN, reportedViolating);
            byTest.put(reported.testName(), reported);
        }
        JcstressTestResult fixed = new JcstressTestResult(JcstressNames.testName(RACE, Variant.FIXED));
        fixed.add(CLEAN, fixedSamples);
        byTest.put(fixed.testName(), fixed);
        return new JcstressResults("synthetic", "synthetic", 0, 0, Path.of("console"), Path.of("report"), byTest);
    }

    @Test
    void theFloorIsWhatTheReportedRateNeedsAt99Percent() {
        // 10 of 10,000: rate 0.1 %, ln(100) / 0.001 = 4,605.2 -> 4,606 samples
        assertEquals(4_606, JcstressVerdicts.cleanFloor(RACE, results(10_000, 10, 1)));
        // a frequent race needs no more than the minimum
        assertEquals(JcstressVerdicts.MIN_CLEAN_SAMPLES, JcstressVerdicts.cleanFloor(RACE, results(10_000, 9_000, 1)));
        // no reported run, or one that showed nothing: the minimum
        assertEquals(JcstressVerdicts.MIN_CLEAN_SAMPLES, JcstressVerdicts.cleanFloor(RACE, results(0, 0, 1)));
        assertEquals(JcstressVerdicts.MIN_CLEAN_SAMPLES, JcstressVerdicts.cleanFloor(RACE, results(10_000, 0, 1)));
    }

    @Test
    void aShortCleanRunIsInconclusiveNotClean() {
        Verdict shortRun = JcstressVerdicts.verdict(RACE, Variant.FIXED, results(10_000, 10, 29));
        assertEquals(Observed.INCOMPLETE, shortRun.observed(), shortRun.headline());
        assertFalse(shortRun.asExpected(), "an inconclusive fixed verdict fails the build");
        assertTrue(shortRun.figures().contains("floor 4,606: too few to say clean"), shortRun.figures());

        Verdict justBelow = JcstressVerdicts.verdict(RACE, Variant.FIXED, results(10_000, 10, 4_605));
        assertEquals(Observed.INCOMPLETE, justBelow.observed());
        Verdict atTheFloor = JcstressVerdicts.verdict(RACE, Variant.FIXED, results(10_000, 10, 4_606));
        assertEquals(Observed.CLEAN, atTheFloor.observed(), atTheFloor.headline());
        assertTrue(atTheFloor.asExpected());
        assertTrue(atTheFloor.figures().endsWith("floor 4,606"), atTheFloor.figures());
    }

    @Test
    void theMinimumHoldsWithoutAReportedRate() {
        assertEquals(Observed.INCOMPLETE, JcstressVerdicts.verdict(RACE, Variant.FIXED, results(0, 0, 999)).observed());
        assertEquals(Observed.CLEAN, JcstressVerdicts.verdict(RACE, Variant.FIXED, results(0, 0, 1_000)).observed());
    }

    @Test
    void aViolatingRunIsTheRaceWhateverItsSize() {
        JcstressResults r = results(3, 1, 1);
        assertEquals(Observed.BUG_FOUND, JcstressVerdicts.verdict(RACE, Variant.REPORTED, r).observed());
    }
}
