package vllmrace.catalogue;

import vllmrace.races.derive.JcstressNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import vllmrace.races.Expectation;
import vllmrace.races.Race;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;
import vllmrace.stress.verdict.JcstressResults;
import vllmrace.stress.verdict.JcstressRun;
import vllmrace.stress.verdict.JcstressTestResult;
import vllmrace.stress.verdict.JcstressVerdicts;

/**
 * {@code ./catalogue --hit-rates}: N back-to-back JCStress runs of the reported variants, each as the build runs them
 * (one launch, then up to {@link JcstressVerdicts#EXTRA_LAUNCHES} relaunches of a variant that showed no violating
 * sample), so results/jcstress-hit-rates.md can say how rare each race is on real threads (violating samples per
 * million) and how often the relaunch, a safety net, fired. A race below {@link #THRESHOLD_PPM} gets its window
 * widened in its scenario.
 */
final class HitRates {
    /** 1 in 10,000 samples. */
    static final double THRESHOLD_PPM = 100;

    private final Path results;
    private final List<Race> races;
    private final int runs;
    private final Terminal out = new Terminal();

    HitRates(Path results, List<Race> selected, int runs) {
        this.results = results;
        this.races = selected.stream().filter(r -> r.expected(Variant.REPORTED) == Expectation.BUG_FOUND).toList();
        this.runs = runs;
    }

    /** One race over the runs. */
    private static final class Tally {
        long samples;
        long violating;
        int runsWithRelaunch;
        int runsNotFound;
        double minPpm = Double.MAX_VALUE;
    }

    int run() throws IOException, InterruptedException {
        JcstressRun jcstress = JcstressRun.fromSystemProperties();
        out.line("JCStress hit rates: " + runs + " back-to-back run(s) of " + races.size() + " reported variant(s) ("
                + String.join(" ", jcstress.settings()) + ", on " + jcstress.java() + ")");
        Map<Race, Tally> tallies = new LinkedHashMap<>();
        races.forEach(r -> tallies.put(r, new Tally()));
        long start = System.nanoTime();
        for (int run = 1; run <= runs; run++) {
            JcstressResults stress = JcstressVerdicts.runUntilObserved(jcstress, races);
            for (Race race : races) {
                Verdict verdict = JcstressVerdicts.verdict(race, Variant.REPORTED, stress);
                JcstressTestResult result = stress.get(JcstressNames.testName(race, Variant.REPORTED));
                Tally t = tallies.get(race);
                t.samples += verdict.runs();
                t.violating += verdict.violatingRuns();
                if (result != null && result.launches() > 1) {
                    t.runsWithRelaunch++;
                }
                if (verdict.violatingRuns() == 0) {
                    t.runsNotFound++;
                }
                t.minPpm = Math.min(t.minPpm, ppm(verdict.violatingRuns(), verdict.runs()));
            }
            out.line(String.format("  run %d/%d done (%s elapsed)", run, runs, Progress.clock((System.nanoTime() - start) / 1_000_000)));
        }
        List<String> below = new ArrayList<>();
        StringBuilder md = new StringBuilder("# JCStress hit rates\n\n")
                .append("Written by `./catalogue --hit-rates` from its last run; do not edit by hand. ")
                .append(runs).append(" back-to-back runs of each reported variant, each as `mvn verify` runs it (one launch; ")
                .append("a variant with no violating sample is relaunched up to ").append(JcstressVerdicts.EXTRA_LAUNCHES)
                .append(" times). Settings: `").append(String.join(" ", jcstress.settings())).append("`, on ").append(jcstress.java())
                .append(". A race below ").append((int) THRESHOLD_PPM).append(" violating samples per million (1 in 10,000) ")
                .append("has its window widened in its scenario, never by sleeping.\n\n")
                .append("| race | samples | violating | per million | lowest run, per million | runs that relaunched | runs that never saw it |\n")
                .append("|---|---|---|---|---|---|---|\n");
        for (Map.Entry<Race, Tally> e : tallies.entrySet()) {
            Tally t = e.getValue();
            double rate = ppm(t.violating, t.samples);
            if (rate < THRESHOLD_PPM) {
                below.add(e.getKey().name());
            }
            md.append(String.format("| `%s` | %,d | %,d | %.0f | %.0f | %d of %d | %d of %d |%n", e.getKey().name(), t.samples,
                    t.violating, rate, t.minPpm, t.runsWithRelaunch, runs, t.runsNotFound, runs));
            out.verdict(rate >= THRESHOLD_PPM && t.runsNotFound == 0, String.format("%s: %.0f violating samples per million, "
                    + "relaunched in %d of %d runs", e.getKey().name(), rate, t.runsWithRelaunch, runs));
        }
        md.append("\n").append(below.isEmpty() ? "Every race is above the threshold.\n" : "Below the threshold: " + String.join(", ", below) + ".\n");
        Files.writeString(results.resolve("jcstress-hit-rates.md"), md.toString());
        out.line("Written to " + results.resolve("jcstress-hit-rates.md"));
        return below.isEmpty() && tallies.values().stream().allMatch(t -> t.runsNotFound == 0) ? 0 : 1;
    }

    private static double ppm(long violating, long samples) {
        return samples == 0 ? 0 : violating * 1_000_000.0 / samples;
    }
}
