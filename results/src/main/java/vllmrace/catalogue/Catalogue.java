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
import vllmrace.lincheck.verdict.LincheckVerdicts;
import vllmrace.lincheck.verdict.TraceStore;
import vllmrace.races.Engine;
import vllmrace.races.Expectation;
import vllmrace.races.FixMatrix;
import vllmrace.races.InterleavingVerdicts;
import vllmrace.races.Observed;
import vllmrace.races.Race;
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
        ResultsReadme readme = ResultsTables.load(results).readme(results);
        readme.write();
        ReadmeRaceTable.rewrite(results.getParent().resolve("README.md"), readme);
    }

    /** The races the arguments name (every race for none); a reference naming several selects them all and says so. */
    static List<Race> select(String[] args) {
        Set<Race> races = new LinkedHashSet<>();
        for (String arg : args) {
            for (String id : arg.split("[\\s,]+")) {
                if (!id.isBlank()) {
                    List<Race> named = Race.lookup(id);
                    if (named.size() > 1) {
                        System.out.println("'" + id + "' names " + named.size() + " races: "
                                + named.stream().map(Enum::name).collect(java.util.stream.Collectors.joining(", ")));
                    }
                    races.addAll(named);
                }
            }
        }
        return races.isEmpty() ? List.of(Race.values()) : List.copyOf(races);
    }

    int run(List<Race> races) throws IOException, InterruptedException {
        System.out.println("Race catalogue: " + races.size() + " race(s), evidence in " + results);
        ResultsTables tables = ResultsTables.load(results);
        Tsv verdicts = tables.verdicts();
        Tsv matrix = tables.matrix();
        Tsv linearizability = tables.linearizability();
        for (Race race : races) {
            verdicts.removeFirst(race.name());
            matrix.removeFirst(race.name());
        }

        int n = 0;
        for (Race race : races) {
            System.out.printf("%n[%d/%d] %s (%s, %s)%n      %s%n", ++n, races.size(), race.name(),
                    race.component().packageName(), race.upstream(), race.summary());
            for (Variant variant : Engine.ENUMERATOR.variants()) {
                if (race.expected(variant) != Expectation.NOT_APPLICABLE) {
                    long start = System.nanoTime();
                    Verdict verdict = InterleavingVerdicts.verdict(race, variant);
                    record(verdicts, verdict, (System.nanoTime() - start) / 1_000_000);
                }
            }
            for (Variant variant : Engine.LINCHECK.variants()) {
                if (race.expected(variant) == Expectation.NOT_APPLICABLE) {
                    continue;
                }
                LincheckVerdicts.Checked checked = LincheckVerdicts.check(race, variant);
                record(verdicts, checked.verdict(), checked.result().wallMillis());
                if (checked.verdict().observed() == Observed.BUG_FOUND && variant == Variant.REPORTED) {
                    TraceStore.save(results, race, variant, checked.result());
                    printInterleaving(checked.result());
                }
            }
            for (FixMatrix.Cell cell : FixMatrix.row(race)) {
                matrix.put(List.of(race.name(), cell.column(), cell.observed().label(), cell.figures()));
                Expectation expected = cell.expected();
                if (cell.observed() == Observed.HARNESS_ERROR
                        || (expected != null && !expected.name().equals(cell.observed().name()))) {
                    mismatches.add(race.name() + " fix-switch matrix, fixes " + cell.column() + ": expected "
                            + (expected == null ? "no modelling error" : expected.label()) + ", observed " + cell.figures());
                }
            }
            System.out.println("      fix-switch matrix: every step interleaving, for " + FixMatrix.columns().size() + " fix sets");
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
            for (Variant variant : JcstressVerdicts.variants(race)) {
                record(verdicts, JcstressVerdicts.verdict(race, variant, stress), stress.wallMillis());
            }
        }
        copyHtmlReport(stress.htmlReport());

        tables.write();
        ResultsReadme readme = tables.readme(results);
        readme.write();
        ReadmeRaceTable.rewrite(results.getParent().resolve("README.md"), readme);
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

    private void record(Tsv verdicts, Verdict verdict, long wallMillis) {
        line(verdict.asExpected(), verdict.headline());
        if (!verdict.asExpected()) {
            mismatches.add(verdict.headline());
            System.out.println(indent(verdict.detail()));
        }
        verdicts.put(List.of(verdict.race().name(), verdict.engine().label(), verdict.variant().label(),
                verdict.expectedLabel(), verdict.observedLabel(), Long.toString(verdict.runs()),
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
