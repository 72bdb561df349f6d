package vllmrace.catalogue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import vllmrace.lincheck.LinearizabilityCheck;
import vllmrace.lincheck.connector.FixDirectionsReport;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckVerdicts;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Expectation;
import vllmrace.races.FixMatrix;
import vllmrace.races.InterleavingVerdicts;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;
import vllmrace.stress.verdict.JcstressResults;
import vllmrace.stress.verdict.JcstressRun;
import vllmrace.stress.verdict.JcstressVerdicts;

/**
 * {@code ./catalogue --flake [N]}: every verdict cell of a catalogue run, N times back to back, each time from scratch
 * (the enumerator and Lincheck recomputed, JCStress relaunched as the build launches it, with its floor and relaunches),
 * judged by the same verdict paths as the catalogue. Writes results/flakiness.md: per cell, the runs that passed, the
 * samples (min / median) and the violating rate. A cell that passed in some runs and not others is a flip: exit 1.
 * Nothing else under results/ is touched: the catalogue's own run writes the verdicts.
 */
final class FlakeCheck {
    private final Path results;
    private final CatalogueOptions options;
    private final int runs;
    private final Terminal out = new Terminal();

    FlakeCheck(Path results, CatalogueOptions options) {
        this.results = results;
        this.options = options;
        this.runs = options.runs();
    }

    int run() throws IOException, InterruptedException {
        List<Race> races = options.races();
        JcstressRun jcstress = JcstressRun.fromSystemProperties();
        List<LinearizabilityCheck.Cell> linearizability = Catalogue.linearizabilityCells(options, races);
        boolean directions = Catalogue.fixDirectionsSelected(options, races);
        out.line("Flake check: every verdict cell of " + races.size() + " race(s), " + runs + " run(s) back to back; JCStress "
                + String.join(" ", jcstress.settings()) + " on " + jcstress.java() + ", relaunched each run");
        Flakiness tally = new Flakiness();
        long start = System.nanoTime();
        for (int run = 1; run <= runs; run++) {
            int before = tally.failures();
            for (Race race : races) {
                for (Subject subject : Cells.subjects(Engine.ENUMERATOR, race)) {
                    tally.add(InterleavingVerdicts.verdict(subject));
                }
                for (Subject subject : Cells.subjects(Engine.LINCHECK, race)) {
                    tally.add(LincheckVerdicts.check(subject).verdict());
                }
                for (FixMatrix.Cell cell : FixMatrix.row(race)) {
                    Expectation expected = cell.expected();
                    boolean passed = cell.observed() != Observed.HARNESS_ERROR
                            && (expected == null || expected.name().equals(cell.observed().name()));
                    tally.add(race.name(), "fix-switch matrix", cell.column(), false, passed, cell.schedules(), cell.violating(),
                            cell.figures());
                }
            }
            for (LinearizabilityCheck.Cell cell : linearizability) {
                boolean reported = cell.race() != null;
                LincheckResult result = reported ? cell.check().runReported(cell.race()) : cell.check().runFixed();
                boolean passed = reported ? result.failed() : !result.failed() && result.invocations() > 0;
                tally.add(cell.check().name(), "linearizability", reported ? cell.race().name() + " reported" : "all fixes",
                        false, passed, result.invocations(), result.failed() ? 1 : 0, result.figures());
            }
            if (directions) {
                List<String> differences = FixDirectionsReport.compute().mismatches();
                tally.add("seed 003", "fix-direction matrix", "8 combinations", false, differences.isEmpty(), 8,
                        differences.size(), differences.isEmpty() ? "as expected" : String.join("; ", differences));
            }
            JcstressResults stress = JcstressVerdicts.runUntilObserved(jcstress, races);
            for (Race race : races) {
                for (Variant variant : JcstressVerdicts.variants(race)) {
                    tally.add(JcstressVerdicts.verdict(race, variant, stress));
                }
            }
            int failed = tally.failures() - before;
            out.verdict(failed == 0, String.format("run %d/%d: %d cell(s), %s (%s elapsed)", run, runs, tally.cells(),
                    failed == 0 ? "every one as expected" : failed + " not as expected",
                    Progress.clock((System.nanoTime() - start) / 1_000_000)));
        }
        long wall = (System.nanoTime() - start) / 1_000_000;
        Path page = results.resolve("flakiness.md");
        Files.writeString(page, tally.page(runs, "./catalogue --flake " + runs + (races.size() == Race.values().length ? ""
                : " " + String.join(" ", races.stream().map(Enum::name).toList())), String.join(" ", jcstress.settings())
                + ", on " + jcstress.java(), wall));
        List<String> flips = tally.flips();
        out.line("Written to " + page);
        if (flips.isEmpty() && tally.failures() == 0) {
            out.line("Every cell passed " + runs + " of " + runs + " runs (" + tally.cells() + " cells, " + Progress.clock(wall)
                    + "); the fewest samples behind a JCStress clean verdict: " + tally.lowestJcstressClean() + ".");
            return 0;
        }
        out.line(tally.failures() + " cell run(s) not as expected; cells that flipped or never passed:");
        flips.forEach(f -> out.line("  - " + f));
        return 1;
    }

    /** The tally over the runs, one entry per cell in the order first seen; its page and its flips. */
    static final class Flakiness {
        /** One run of one cell. */
        record Sample(boolean passed, long samples, long violating, String figures) {
        }

        /** One cell: what it is, whether its clean side counts for the JCStress floor, and its runs. */
        record Cell(String subject, String engine, String variant, boolean jcstressClean, List<Sample> runs) {
            int passed() {
                return (int) runs.stream().filter(Sample::passed).count();
            }

            long minSamples() {
                return runs.stream().mapToLong(Sample::samples).min().orElse(0);
            }

            long medianSamples() {
                long[] sorted = runs.stream().mapToLong(Sample::samples).sorted().toArray();
                return sorted.length == 0 ? 0 : sorted[(sorted.length - 1) / 2];
            }

            String rate() {
                long samples = runs.stream().mapToLong(Sample::samples).sum();
                long violating = runs.stream().mapToLong(Sample::violating).sum();
                if (violating == 0) {
                    return "0";
                }
                double min = runs.stream().mapToDouble(s -> s.samples == 0 ? 0 : (double) s.violating / s.samples).min().orElse(0);
                double max = runs.stream().mapToDouble(s -> s.samples == 0 ? 0 : (double) s.violating / s.samples).max().orElse(0);
                return String.format("%s (runs %s to %s)", percent((double) violating / samples), percent(min), percent(max));
            }

            boolean sameFigures() {
                return runs.stream().map(Sample::figures).distinct().count() == 1;
            }
        }

        private final Map<String, Cell> cells = new LinkedHashMap<>();
        private int failures;

        void add(Verdict v) {
            add(v.race().name(), v.engine().label(), v.subject().variantLabel(),
                    v.engine() == Engine.JCSTRESS && v.expected() == Expectation.CLEAN, v.asExpected(), v.runs(), v.violatingRuns(),
                    v.figures());
        }

        void add(String subject, String engine, String variant, boolean jcstressClean, boolean passed, long samples, long violating,
                 String figures) {
            cells.computeIfAbsent(subject + "\t" + engine + "\t" + variant,
                            k -> new Cell(subject, engine, variant, jcstressClean, new ArrayList<>()))
                    .runs().add(new Sample(passed, samples, violating, figures));
            if (!passed) {
                failures++;
            }
        }

        int cells() {
            return cells.size();
        }

        int failures() {
            return failures;
        }

        /** Cells that did not pass every run: a flip (passed some) or a cell that never passed, with its counts. */
        List<String> flips() {
            List<String> flips = new ArrayList<>();
            for (Cell c : cells.values()) {
                if (c.passed() < c.runs().size()) {
                    flips.add(c.subject() + " [" + c.engine() + ", " + c.variant() + "]: passed " + c.passed() + " of "
                            + c.runs().size() + (c.passed() > 0 ? " (a flip)" : " (never)") + "; "
                            + c.runs().stream().filter(s -> !s.passed()).findFirst().orElseThrow().figures());
                }
            }
            return flips;
        }

        /** The fewest samples behind a passing JCStress clean verdict, over every such cell and run ("none" if none). */
        String lowestJcstressClean() {
            Cell lowest = null;
            long min = Long.MAX_VALUE;
            for (Cell c : cells.values()) {
                for (Sample s : c.runs()) {
                    if (c.jcstressClean() && s.passed() && s.samples() < min) {
                        min = s.samples();
                        lowest = c;
                    }
                }
            }
            return lowest == null ? "none" : String.format("%,d samples (%s, %s)", min, lowest.subject(), lowest.variant());
        }

        String page(int runs, String command, String jcstressSettings, long wallMillis) {
            List<String> flips = flips();
            StringBuilder md = new StringBuilder("# Flakiness\n\n")
                    .append("Written by `").append(command).append("`; do not edit by hand. Every verdict cell of the catalogue, ")
                    .append(runs).append(" runs back to back in one JVM, each from scratch: the step enumerator and Lincheck ")
                    .append("recomputed, JCStress relaunched as `mvn verify` launches it (with its clean floor and relaunches; ")
                    .append(jcstressSettings).append("). A cell passes a run when its verdict is what the catalogue expects, judged ")
                    .append("as the catalogue judges it. Samples: enumerated interleavings, Lincheck invocations or JCStress samples; ")
                    .append("\"same figures\" says whether every run printed the same figures (the deterministic engines must).\n\n")
                    .append(String.format("**%d cells, %d runs each, %s: %s.** The fewest samples behind a JCStress clean verdict: %s.%n%n",
                            cells.size(), runs, Progress.clock(wallMillis), flips.isEmpty() ? "every cell passed every run"
                                    : flips.size() + " cell(s) did not pass every run", lowestJcstressClean()));
            if (!flips.isEmpty()) {
                md.append("Not passed in every run:\n\n");
                flips.forEach(f -> md.append("- ").append(f).append('\n'));
                md.append('\n');
            }
            md.append("| subject | engine | variant | passed | samples min / median | violating rate | same figures |\n")
                    .append("|---|---|---|---|---|---|---|\n");
            for (Cell c : cells.values()) {
                md.append(String.format("| %s | %s | %s | %d of %d | %,d / %,d | %s | %s |%n", c.subject(), c.engine(), c.variant(),
                        c.passed(), c.runs().size(), c.minSamples(), c.medianSamples(), c.rate(), c.sameFigures() ? "yes" : "no"));
            }
            return md.toString();
        }

        private static String percent(double fraction) {
            return String.format("%.3g%%", fraction * 100);
        }
    }
}
