package vllmrace.catalogue;

import vllmrace.races.Labels;
import vllmrace.races.Stories;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import vllmrace.evidence.ResultsDir;
import vllmrace.lincheck.LinearizabilityCheck;
import vllmrace.lincheck.connector.FixDirectionMatrix;
import vllmrace.lincheck.connector.FixDirectionsReport;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.lincheck.verdict.LincheckVerdicts;
import vllmrace.lincheck.verdict.TraceStore;
import vllmrace.model.deploy.Profile;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Expectation;
import vllmrace.races.FixMatrix;
import vllmrace.races.InterleavingVerdicts;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.UpstreamPinUse;
import vllmrace.races.Shard;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.frontend.FrontendYields;
import vllmrace.races.Verdict;
import vllmrace.stress.verdict.JcstressResults;
import vllmrace.stress.verdict.JcstressRun;
import vllmrace.stress.verdict.JcstressVerdicts;

/**
 * The race catalogue ({@code ./catalogue}, which builds the suite once and runs this class directly): reproduces the
 * selected races under every engine and fix set with the verdict paths the tests use, prints a line per race as it
 * starts and ends (elapsed, and an estimate of what is left from the last run's timings), each counterexample's model
 * steps and detector findings, and merges the evidence into results/: a partial run replaces only its own races'
 * rows, traces, replays and JCStress pages. Exit status: 0 every verdict as expected, 1 some differ (listed at the end),
 * 2 bad input.
 */
public final class Catalogue {
    private final CatalogueOptions options;
    private final Path results = ResultsDir.get();
    private final List<String> mismatches = new ArrayList<>();
    /** Lincheck clean cells that rest on a bounded exploration (budget reached, step sequences left), for the summary. */
    private int lincheckBoundedClean;
    /** The JCStress clean verdict nearest its floor (samples over floor), and that ratio, for the summary. */
    private Verdict thinnestJcstressClean;
    private double thinnestMargin = Double.MAX_VALUE;
    private final Terminal out = new Terminal();
    /** How often a JCStress launch's progress is printed, from its console. */
    static final long PROGRESS_MILLIS = 10_000;

    Catalogue(CatalogueOptions options) {
        this.options = options;
    }

    public static void main(String[] args) {
        CatalogueOptions options;
        try {
            options = CatalogueOptions.parse(args);
        } catch (CatalogueOptions.UsageException e) {
            System.err.println("catalogue: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (options.deep()) {
            System.setProperty("vllmrace.jcstress.args", JcstressRun.DEEP_NAME);
            System.setProperty("vllmrace.lincheck.scale", "10");
        }
        try {
            Catalogue catalogue = new Catalogue(options);
            int status = switch (options.command()) {
                case HELP -> {
                    System.out.print(CatalogueOptions.HELP);
                    yield 0;
                }
                case LIST -> catalogue.list();
                case RENDER -> catalogue.render();
                case HIT_RATES -> new HitRates(catalogue.results, options.races(), options.runs()).run();
                case MUTATION -> new MutationReport(catalogue.results).run();
                case DRIFT -> drift(options.driftPath(), options.pinnedPath());
                case HUNT -> new HuntCommand(options.hunt(), catalogue.results).run();
                case PROVE -> new ProveCommand(catalogue.results, options.bound()).run();
                case FLAKE -> new FlakeCheck(catalogue.results, options).run();
                case BENCH -> new BenchCommand(catalogue.results, options.races(), options.runs(), options.bench()).run();
                case RUN -> catalogue.run();
            };
            System.exit(status);
        } catch (Exception e) {
            System.err.println("catalogue: internal error, not a verdict: " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static int drift(String path, String pinned) {
        try {
            return new DriftCommand(java.nio.file.Path.of(path), pinned == null ? null : java.nio.file.Path.of(pinned)).run();
        } catch (vllmrace.catalogue.drift.DriftException | java.nio.file.InvalidPathException e) {
            System.err.println("catalogue: --drift: " + e.getMessage());
            return 2;
        }
    }

    /**
     * Every race, its component and upstream reference, and its vLLM-main verdict on each deployment profile (or the one
     * {@code --profile} names): expected, and as last computed when that differs or is missing.
     */
    int list() {
        ResultsTables tables = ResultsTables.load(results);
        List<Profile> profiles = options.profile() == null ? List.of(Profile.values()) : List.of(options.profile());
        List<List<String>> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("race", "component", "upstream"));
        profiles.forEach(p -> header.add(p.label()));
        rows.add(header);
        for (Race race : options.races()) {
            List<String> row = new ArrayList<>(List.of(race.name(), race.component().packageName(), race.upstream()));
            for (Profile profile : profiles) {
                List<String> last = tables.verdicts().get(race.name(), Engine.ENUMERATOR.label(), profile.label());
                String expected = Labels.expectedLabel(race, profile);
                row.add(race.expected(profile) == Expectation.NOT_APPLICABLE ? expected : last == null ? expected + " (not run)" : last.get(4).equals(expected) ? expected
                        : expected + " (last run: " + last.get(4) + ")");
            }
            rows.add(row);
        }
        int[] width = new int[rows.get(0).size()];
        rows.forEach(r -> { for (int i = 0; i < width.length; i++) { width[i] = Math.max(width[i], r.get(i).length()); } });
        for (List<String> r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < width.length; i++) {
                line.append(i == width.length - 1 ? r.get(i) : String.format("%-" + (width[i] + 2) + "s", r.get(i)));
            }
            out.line(line.toString());
        }
        return 0;
    }

    /** Re-renders results/README.md and the README race table from the saved tables, running nothing. */
    int render() throws IOException {
        ResultsReadme readme = ResultsTables.load(results).readme(results);
        readme.write();
        ReadmeRaceTable.rewrite(results.getParent().resolve("README.md"), readme);
        out.line("Rendered " + results.resolve("README.md") + " and the README race table from results/*.tsv");
        return 0;
    }

    int run() throws IOException, InterruptedException {
        List<Race> races = options.races();
        ResultsTables tables = ResultsTables.load(results);
        JcstressRun jcstress = JcstressRun.fromSystemProperties();
        List<LinearizabilityCheck.Cell> linearizability = linearizabilityCells(options, races);
        boolean directions = fixDirectionsSelected(options, races);
        Progress progress = new Progress(tables, races, linearizability, directions);
        options.notes().forEach(out::line);
        out.line("Race catalogue: " + races.size() + " race(s)" + (options.shard().equals(Shard.ALL) ? "" : ", shard " + options.shard())
                + "; JCStress on " + jcstress.java() + "; evidence merged into " + results);
        out.line("Estimated " + Progress.clock(progress.estimateLeft()) + " (from the last run's timings)");
        for (Race race : races) {
            tables.verdicts().removeFirst(race.name());
            tables.matrix().removeFirst(race.name());
        }

        int n = 0;
        for (Race race : races) {
            progress.startRace();
            out.blank();
            out.line(String.format("[%d/%d] %s (%s, %s): %s", ++n, races.size(), race.name(), race.component().packageName(),
                    race.upstream(), Stories.summary(race)));
            for (Subject subject : Cells.subjects(Engine.ENUMERATOR, race)) {
                long start = System.nanoTime();
                Verdict verdict = InterleavingVerdicts.verdict(subject);
                record(tables.verdicts(), verdict, (System.nanoTime() - start) / 1_000_000);
            }
            for (Subject subject : Cells.subjects(Engine.LINCHECK, race)) {
                LincheckVerdicts.Checked checked = LincheckVerdicts.check(subject);
                record(tables.verdicts(), checked.verdict(), checked.result().wallMillis());
                if (checked.verdict().observed() == Observed.CLEAN && checked.result().bounded()) {
                    lincheckBoundedClean++;
                }
                if (checked.verdict().observed() == Observed.BUG_FOUND && subject.variant() == Variant.REPORTED) {
                    Path trace = TraceStore.save(results, race, subject.variant(), checked.result());
                    printCounterexample(checked.result(), trace);
                }
            }
            int cells = 0;
            for (FixMatrix.Cell cell : FixMatrix.row(race)) {
                cells++;
                tables.matrix().put(List.of(race.name(), cell.column(), cell.observed().label(), cell.figures()));
                Expectation expected = cell.expected();
                if (cell.observed() == Observed.HARNESS_ERROR || (expected != null && !expected.name().equals(cell.observed().name()))) {
                    mismatch(race.name() + " fix-switch matrix, fixes " + cell.column() + ": expected "
                            + (expected == null ? "no modelling error" : expected.label()) + ", observed " + cell.figures());
                }
            }
            out.detail("fix-switch matrix: " + cells + " fix sets, every step interleaving of each");
            out.detail(progress.endRace());
        }

        if (!linearizability.isEmpty()) {
            out.blank();
            out.line("Linearizability checks: " + linearizability.size() + " cell(s)");
        }
        for (LinearizabilityCheck.Cell cell : linearizability) {
            LincheckResult result = cell.race() == null ? cell.check().runFixed() : cell.check().runReported(cell.race());
            recordLinearizability(tables.linearizability(), cell, result);
            progress.add(result.wallMillis());
        }
        if (directions) {
            fixDirections();
        }
        if (frontendYieldsSelected(options, races)) {
            frontendYields();
        }

        out.blank();
        out.line("JCStress: " + races.size() + " race(s), their JCStress variants in one launch (" + String.join(" ", jcstress.settings())
                + ", on " + jcstress.java() + "), about " + Progress.clock(progress.jcstressEstimate()) + " ...");
        JcstressResults stress;
        try (JcstressProgress.Watcher watcher = new JcstressProgress.Watcher(jcstress.workDir(), PROGRESS_MILLIS, out::detail)) {
            stress = JcstressVerdicts.runUntilObserved(jcstress, races);
        }
        for (Race race : races) {
            for (Variant variant : JcstressVerdicts.variants(race)) {
                Verdict verdict = JcstressVerdicts.verdict(race, variant, stress);
                record(tables.verdicts(), verdict, stress.wallMillis(), race.name() + ", ");
                double margin = (double) verdict.runs() / JcstressVerdicts.cleanFloor(race, stress);
                if (verdict.observed() == Observed.CLEAN && margin < thinnestMargin) {
                    thinnestJcstressClean = verdict;
                    thinnestMargin = margin;
                }
            }
        }
        JcstressReportPages.merge(stress.htmlReport(), results.resolve("jcstress-report"), races, tables.verdicts());

        tables.write();
        UpstreamPinsPage.write(results, UpstreamPinUse.compute(List.of(Race.values())));
        ResultsReadme readme = tables.readme(results);
        readme.write();
        ReadmeRaceTable.rewrite(results.getParent().resolve("README.md"), readme);
        out.blank();
        out.line("Lincheck: " + lincheckBoundedClean + " clean cell(s) rest on a bounded exploration (the budget ran out before "
                + "every step sequence of the scenario was among the invocations; their figures say \"bounded\").");
        if (thinnestJcstressClean != null) {
            out.line(String.format("JCStress: the clean verdict nearest its floor, at %.1f times it: %s.", thinnestMargin,
                    thinnestJcstressClean.headline()));
        }
        String took = "in " + Progress.clock(progress.elapsed());
        if (mismatches.isEmpty()) {
            out.line("Every verdict matches the catalogue (" + races.size() + " race(s), " + took + "). Evidence: " + results.resolve("README.md"));
            return 0;
        }
        out.line(mismatches.size() + " verdict(s) differ from the catalogue (" + took + "):");
        mismatches.forEach(m -> out.line("  - " + m));
        return 1;
    }

    /**
     * The linearizability cells to run: with a shard, the shard's; otherwise every check's cells of the selected races
     * and the every-fix cell of each check that covers one of them.
     */
    static List<LinearizabilityCheck.Cell> linearizabilityCells(CatalogueOptions options, List<Race> races) {
        if (!options.shard().equals(Shard.ALL)) {
            return LinearizabilityCheck.cells(options.shard());
        }
        List<LinearizabilityCheck.Cell> cells = new ArrayList<>();
        for (LinearizabilityCheck check : LinearizabilityCheck.values()) {
            List<Race> covered = check.races().stream().filter(races::contains).toList();
            covered.stream().filter(race -> race.expected(vllmrace.races.Variant.REPORTED) == vllmrace.races.Expectation.BUG_FOUND)
                    .forEach(race -> cells.add(new LinearizabilityCheck.Cell(check, race)));
            if (!covered.isEmpty()) {
                cells.add(new LinearizabilityCheck.Cell(check, null));
            }
        }
        return cells;
    }

    static boolean fixDirectionsSelected(CatalogueOptions options, List<Race> races) {
        if (!options.shard().equals(Shard.ALL)) {
            return FixDirectionMatrix.inShard(options.shard());
        }
        return races.contains(Race.LateLoadCompletionUnion) || races.contains(Race.PullIntoFreedBlocks)
                || races.stream().anyMatch(vllmrace.races.connector.HandleReportDirections.RACES::contains)
                || races.stream().anyMatch(vllmrace.races.connector.PullAfterFreeDirections.RACES::contains);
    }

    /** The frontend-yields table goes with the first frontend race (DuplicateIdAbortWindow's shard when sharded). */
    static boolean frontendYieldsSelected(CatalogueOptions options, List<Race> races) {
        if (!options.shard().equals(Shard.ALL)) {
            return options.shard().includes(FrontendYields.races().get(0));
        }
        return races.stream().anyMatch(FrontendYields.races()::contains);
    }

    /**
     * Every frontend race and the external-id orphan question under each yield condition, every interleaving, against the
     * registry's declarations; writes results/frontend-yields.md.
     */
    private void frontendYields() {
        out.blank();
        out.line("Frontend yields: " + FrontendYields.races().size() + " frontend races and the external-id orphan question, "
                + FrontendYields.columns().size() + " yield conditions, every step interleaving");
        FrontendYields table = FrontendYields.compute();
        List<String> differences = table.mismatches();
        out.verdict(differences.isEmpty(), "frontend yields: " + (differences.isEmpty()
                ? table.cells().size() + " cells, every checked cell agrees with Race.needsYield and the profiles' expectations; "
                        + "no profile orphans a re-add"
                : differences.size() + " cell(s) disagree"));
        differences.forEach(d -> mismatch("frontend yields, " + d));
        out.detail("written to " + table.write(results));
    }

    /**
     * Seed 003's fix-direction matrix: one Lincheck run per combination and every step interleaving, each against
     * {@link FixDirectionMatrix#EXPECTED}; then the NIXL handle-report directions; writes results/fix-directions.md.
     */
    private void fixDirections() {
        out.blank();
        out.line("Fix-direction matrices: seed 003 by Lincheck (" + LincheckRun.scaled(FixDirectionMatrix.COMBINATION_BUDGET)
                + " invocations per combination) and every step interleaving, 8 combinations; the NIXL handle-report "
                + "directions over every interleaving");
        FixDirectionsReport report = FixDirectionsReport.compute();
        List<String> differences = report.mismatches();
        out.verdict(differences.isEmpty(), "fix-direction matrix: " + (differences.isEmpty()
                ? "both computations match the expected matrix"
                : differences.size() + " cell(s) differ from the expected matrix"));
        differences.forEach(d -> mismatch("fix-direction matrix, " + d));
        out.detail("written to " + report.write(results));
    }

    private void recordLinearizability(Tsv table, LinearizabilityCheck.Cell cell, LincheckResult result) {
        boolean reported = cell.race() != null;
        String variant = reported ? cell.race().name() + " reported" : "all fixes";
        Expectation expected = reported ? Expectation.BUG_FOUND : Expectation.CLEAN;
        Observed observed = result.failed() ? Observed.BUG_FOUND : Observed.CLEAN;
        boolean ok = reported ? result.failed() : !result.failed() && result.invocations() > 0;
        out.verdict(ok, cell.check().name() + " linearizability [" + variant + "]: expected "
                + (reported ? "not linearizable" : "linearizable") + ", " + result.figures());
        if (!ok) {
            mismatch(cell.check().name() + " linearizability [" + variant + "]: " + result.figures());
        }
        table.put(List.of(cell.check().name(), variant, expected.label(), observed.label(), result.figures(),
                Long.toString(result.wallMillis())));
    }

    private void record(Tsv verdicts, Verdict verdict, long wallMillis) {
        record(verdicts, verdict, wallMillis, "");
    }

    private void record(Tsv verdicts, Verdict verdict, long wallMillis, String prefix) {
        out.verdict(verdict.asExpected(), prefix + verdict.engine().label() + ", " + verdict.subject().variantLabel() + ": "
                + verdict.observedLabel() + " (" + verdict.figures() + ")"
                + (verdict.asExpected() ? "" : "; expected " + verdict.expectedLabel()));
        if (!verdict.asExpected()) {
            mismatch(verdict.headline());
            out.detail(verdict.detail());
        }
        verdicts.put(List.of(verdict.race().name(), verdict.engine().label(), verdict.subject().variantLabel(),
                verdict.expectedLabel(), verdict.observedLabel(), Long.toString(verdict.runs()),
                Long.toString(verdict.violatingRuns()), verdict.figures(), Long.toString(wallMillis)));
    }

    private void mismatch(String line) {
        mismatches.add(line);
    }

    /** The counterexample on the terminal: its model steps and the detectors' findings; Lincheck's own table is in the trace. */
    private void printCounterexample(LincheckResult result, Path trace) {
        out.detail("counterexample (model steps, in the order they ran):");
        for (int i = 0; i < result.steps().size(); i++) {
            out.detail(String.format("  %2d. %s", i + 1, result.steps().get(i)));
        }
        for (String violation : result.violations()) {
            out.detail("  detector: " + violation);
        }
        out.detail("trace and Lincheck's interleaving: " + results.getParent().relativize(trace));
    }
}
