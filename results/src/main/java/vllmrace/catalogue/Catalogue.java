package vllmrace.catalogue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import vllmrace.evidence.ResultsDir;
import vllmrace.lincheck.LinearizabilityCheck;
import vllmrace.lincheck.connector.FixDirectionMatrix;
import vllmrace.lincheck.connector.FixDirectionsReport;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.lincheck.verdict.TraceStore;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Engine;
import vllmrace.races.Expectation;
import vllmrace.races.AllInterleavings;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;
import vllmrace.stress.verdict.JcstressResults;
import vllmrace.stress.verdict.JcstressRun;
import vllmrace.stress.verdict.JcstressVerdicts;

/**
 * The race catalogue: reproduces races and writes the evidence under results/. With no argument, every
 * race; with race ids (or upstream references such as {@code #15326}), only those. For each race it prints a
 * progress line, the verdict per engine and variant, and for each failure the interleaving; it exits non-zero
 * when any verdict differs from the catalogue's expectation.
 */
public final class Catalogue {
    private final Path results = ResultsDir.get();
    private final List<String> mismatches = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--render")) {
            new Catalogue().render();
            return;
        }
        List<Race> races = select(args);
        int status = new Catalogue().run(races);
        System.exit(status);
    }

    /** Re-renders results/README.md and the README race table from the saved tables, running nothing. */
    void render() throws IOException {
        new ResultsReadme(results, verdictsTable(), matrixTable(), linearizabilityTable()).write();
        ReadmeRaceTable.rewrite(results.getParent().resolve("README.md"));
    }

    private Tsv verdictsTable() {
        return new Tsv(results.resolve("verdicts.tsv"), 3,
                "race", "engine", "variant", "expected", "observed", "runs", "violating", "figures", "wall_ms");
    }

    private Tsv matrixTable() {
        return new Tsv(results.resolve("fix-matrix.tsv"), 2, "race", "fixes_on", "observed", "figures");
    }

    private Tsv linearizabilityTable() {
        return new Tsv(results.resolve("linearizability.tsv"), 2,
                "check", "variant", "expected", "observed", "figures", "wall_ms");
    }

    static List<Race> select(String[] args) {
        Set<Race> races = new LinkedHashSet<>();
        for (String arg : args) {
            for (String id : arg.split("[\\s,]+")) {
                if (!id.isBlank()) {
                    races.add(Race.lookup(id));
                }
            }
        }
        return races.isEmpty() ? List.of(Race.values()) : List.copyOf(races);
    }

    int run(List<Race> races) throws IOException, InterruptedException {
        System.out.println("Race catalogue: " + races.size() + " race(s), evidence in " + results);
        Tsv verdicts = verdictsTable();
        Tsv matrix = matrixTable();
        Tsv linearizability = linearizabilityTable();
        for (Race race : races) {
            verdicts.removeFirst(race.name());
            matrix.removeFirst(race.name());
        }

        int n = 0;
        for (Race race : races) {
            System.out.printf("%n[%d/%d] %s (%s, %s)%n      %s%n", ++n, races.size(), race.name(),
                    race.component().packageName(), race.upstream(), race.summary());
            for (Variant variant : Variant.values()) {
                if (race.expected(variant) == Expectation.NOT_APPLICABLE) {
                    continue;
                }
                System.out.printf("      Lincheck, %s variant ...%n", variant.className().toLowerCase());
                LincheckResult result = LincheckRun.checkScenario(race, race.fixes(variant), LincheckRun.scaled(LincheckRun.SCENARIO_BUDGET));
                Verdict verdict = lincheckVerdict(race, variant, result);
                record(verdicts, verdict, result.wallMillis());
                if (result.failed()) {
                    if (variant == Variant.REPORTED) {
                        TraceStore.save(race, variant, result);
                    }
                    printInterleaving(result);
                }
            }
            for (String label : matrixColumns()) {
                FixSet fixes = matrixFixes(race, label);
                Map<RaceOutcome, Integer> outcomes = AllInterleavings.outcomes(() -> race.scenario(fixes));
                int schedules = outcomes.values().stream().mapToInt(Integer::intValue).sum();
                int violating = outcomes.entrySet().stream().filter(e -> e.getKey().violation()).mapToInt(Map.Entry::getValue).sum();
                Observed observed = violating > 0 ? Observed.BUG_FOUND : Observed.CLEAN;
                matrix.put(List.of(race.name(), label, observed.label(),
                        violating + " of all " + schedules + " step interleavings violate"));
                Expectation expected = matrixExpectation(race, label);
                if (expected != null && !expected.label().equals(observed.label())) {
                    mismatches.add(race.name() + " fix-switch matrix, fixes " + label + ": expected " + expected.label()
                            + ", observed " + observed.label());
                }
            }
            System.out.println("      fix-switch matrix: every step interleaving, for " + matrixColumns().size() + " fix sets");
        }

        for (LinearizabilityCheck check : LinearizabilityCheck.values()) {
            for (Race race : check.races()) {
                if (races.contains(race)) {
                    System.out.printf("%nLinearizability, %s, %s reported ...%n", check.name(), race.name());
                    recordLinearizability(linearizability, check, race.name() + " reported", Expectation.BUG_FOUND, check.runReported(race));
                }
            }
            if (check.races().stream().anyMatch(races::contains)) {
                System.out.printf("%nLinearizability, %s, every fix on ...%n", check.name());
                recordLinearizability(linearizability, check, "all fixes", Expectation.CLEAN, check.runFixed());
            }
        }

        if (races.contains(Race.LateLoadCompletionUnion) || races.contains(Race.PullIntoFreedBlocks)) {
            fixDirections();
        }

        System.out.printf("%nJCStress: %d race(s), both variants, in one launch (%s) ...%n", races.size(),
                String.join(" ", JcstressRun.fromSystemProperties().settings()));
        JcstressRun jcstress = JcstressRun.fromSystemProperties();
        JcstressResults stress = JcstressVerdicts.runUntilObserved(jcstress, races);
        for (Race race : races) {
            for (Variant variant : Variant.values()) {
                if (race.expected(variant) != Expectation.NOT_APPLICABLE) {
                    Verdict verdict = JcstressVerdicts.verdict(race, variant, stress);
                    record(verdicts, verdict, stress.wallMillis());
                }
            }
        }
        copyHtmlReport(stress.htmlReport());

        verdicts.write();
        matrix.write();
        linearizability.write();
        new ResultsReadme(results, verdicts, matrix, linearizability).write();
        ReadmeRaceTable.rewrite(results.getParent().resolve("README.md"));
        System.out.println();
        if (mismatches.isEmpty()) {
            System.out.println("Every verdict matches the catalogue. Evidence: " + results.resolve("README.md"));
            return 0;
        }
        System.out.println(mismatches.size() + " verdict(s) differ from the catalogue:");
        mismatches.forEach(m -> System.out.println("  " + m));
        return 1;
    }

    /**
     * Seed 003's fix-direction matrix: one Lincheck run per combination and every step interleaving, each against
     * {@link FixDirectionMatrix#EXPECTED}; writes results/fix-directions.md.
     */
    private void fixDirections() {
        System.out.printf("%nSeed 003 fix-direction matrix: Lincheck (%d invocations per combination) and every step "
                + "interleaving, 8 combinations ...%n", LincheckRun.scaled(FixDirectionMatrix.COMBINATION_BUDGET));
        FixDirectionsReport report = FixDirectionsReport.compute();
        List<String> differences = report.mismatches();
        line(differences.isEmpty(), "fix-direction matrix: " + (differences.isEmpty()
                ? "both computations match the expected matrix"
                : differences.size() + " cell(s) differ from the expected matrix"));
        for (String difference : differences) {
            line(false, "fix-direction matrix, " + difference);
            mismatches.add("fix-direction matrix, " + difference);
        }
        System.out.println("      written to " + report.write(results));
    }

    private void recordLinearizability(Tsv table, LinearizabilityCheck check, String variant, Expectation expected,
                                       LincheckResult result) {
        Observed observed = result.failed() ? Observed.BUG_FOUND : Observed.CLEAN;
        boolean ok = expected == Expectation.BUG_FOUND ? result.failed() : !result.failed() && result.invocations() > 0;
        line(ok, check.name() + " linearizability [" + variant + "]: expected "
                + (expected == Expectation.BUG_FOUND ? "not linearizable" : "linearizable") + ", " + result.figures());
        if (!ok) {
            mismatches.add(check.name() + " linearizability [" + variant + "]: " + result.figures());
        }
        table.put(List.of(check.name(), variant, expected.label(), observed.label(), result.figures(),
                Long.toString(result.wallMillis())));
        if (result.failed() && expected == Expectation.BUG_FOUND) {
            System.out.println(indent(result.report()));
        }
    }

    /** The fix sets of the fix-switch matrix: none, each fix alone, the race's own fixes alone, all. */
    static List<String> matrixColumns() {
        List<String> columns = new ArrayList<>();
        columns.add("none");
        for (Fix fix : Fix.values()) {
            columns.add(fix.name());
        }
        columns.add("own");
        columns.add("all");
        return columns;
    }

    static FixSet matrixFixes(Race race, String column) {
        return switch (column) {
            case "none" -> FixSet.none();
            case "own" -> FixSet.of(race.closedBy());
            case "all" -> FixSet.all();
            default -> FixSet.none().with(Fix.valueOf(column));
        };
    }

    /**
     * What the matrix must show: every race is gone with every fix ON. Other cells are computed and shown, not
     * asserted: a race may need another fix too (its scenario can hit a neighbour race), and a race such as
     * AbortedLoadLeak only exists once a first fix is ON.
     */
    static Expectation matrixExpectation(Race race, String column) {
        return column.equals("all") ? Expectation.CLEAN : null;
    }

    private static Verdict lincheckVerdict(Race race, Variant variant, LincheckResult result) {
        Observed observed = result.failed() ? Observed.BUG_FOUND
                : result.invocations() == 0 ? Observed.NO_RESULTS : Observed.CLEAN;
        return new Verdict(race, Engine.LINCHECK, variant, observed, result.invocations(), result.failed() ? 1 : 0,
                result.figures(), result.report());
    }

    private void record(Tsv verdicts, Verdict verdict, long wallMillis) {
        line(verdict.asExpected(), verdict.headline());
        if (!verdict.asExpected()) {
            mismatches.add(verdict.headline());
        }
        verdicts.put(List.of(verdict.race().name(), verdict.engine().label(), verdict.variant().className().toLowerCase(),
                verdict.expected().label(), verdict.observed().label(), Long.toString(verdict.runs()),
                Long.toString(verdict.violatingRuns()), verdict.figures(), Long.toString(wallMillis)));
    }

    private static void line(boolean ok, String text) {
        System.out.println("      " + (ok ? "[ok]      " : "[MISMATCH]") + " " + text);
    }

    private static void printInterleaving(LincheckResult result) {
        System.out.println("        interleaving (model steps):");
        for (int i = 0; i < result.steps().size(); i++) {
            System.out.printf("          %2d. %s%n", i + 1, result.steps().get(i));
        }
        for (String violation : result.violations()) {
            System.out.println("        detector: " + violation);
        }
        System.out.println(indent(result.report()));
    }

    private static String indent(String text) {
        return "        " + text.replace("\n", "\n        ");
    }

    /** Keeps the last catalogue run's JCStress HTML report under results/jcstress-report/. */
    private void copyHtmlReport(Path report) throws IOException {
        Path target = results.resolve("jcstress-report");
        if (Files.exists(target)) {
            try (Stream<Path> old = Files.walk(target)) {
                for (Path p : old.sorted((a, b) -> b.compareTo(a)).toList()) {
                    Files.delete(p);
                }
            }
        }
        if (!Files.isDirectory(report)) {
            return;
        }
        try (Stream<Path> files = Files.walk(report)) {
            for (Path source : files.toList()) {
                Path dest = target.resolve(report.relativize(source).toString());
                if (Files.isDirectory(source)) {
                    Files.createDirectories(dest);
                } else {
                    Files.copy(source, dest, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
