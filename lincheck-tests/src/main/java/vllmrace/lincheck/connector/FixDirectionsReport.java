package vllmrace.lincheck.connector;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import vllmrace.evidence.ResultsDir;
import vllmrace.lincheck.connector.FixDirectionMatrix.Row;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.races.connector.HandleReportDirections;
import vllmrace.races.connector.PullAfterFreeDirections;
import vllmrace.races.connector.SeedThreeInvariant;

/**
 * Seed 003's fix-direction matrix, both ways ({@link FixDirectionMatrix#compute()} with Lincheck,
 * {@link FixDirectionMatrix#computeExhaustive()} as the cross-check), against {@link FixDirectionMatrix#EXPECTED}:
 * what the catalogue writes to {@code results/fix-directions.md}.
 *
 * @param budget     Lincheck invocations per combination
 * @param lincheck   the Lincheck matrix
 * @param exhaustive the matrix over every step-level interleaving
 */
public record FixDirectionsReport(int budget, List<Row> lincheck, List<Row> exhaustive, List<vllmrace.races.connector.DirectionTable.Cell> handles,
                                  List<vllmrace.races.connector.DirectionTable.Cell> pullAfterFree) {

    /**
     * Computes both matrices (Lincheck budget {@link FixDirectionMatrix#COMBINATION_BUDGET}, scaled by the deep profile),
     * and the NIXL handle-report directions ({@link HandleReportDirections}).
     */
    public static FixDirectionsReport compute() {
        int budget = LincheckRun.scaled(FixDirectionMatrix.COMBINATION_BUDGET);
        return new FixDirectionsReport(budget, FixDirectionMatrix.compute(budget), FixDirectionMatrix.computeExhaustive(),
                HandleReportDirections.compute(), PullAfterFreeDirections.TABLE.compute());
    }

    /** Every cell of either matrix that differs from the expected one; empty when both match it. */
    public List<String> mismatches() {
        List<String> all = new ArrayList<>();
        FixDirectionMatrix.mismatches(lincheck).forEach(m -> all.add("Lincheck: " + m));
        FixDirectionMatrix.mismatches(exhaustive).forEach(m -> all.add("every step interleaving: " + m));
        HandleReportDirections.mismatches(handles).forEach(m -> all.add("NIXL handle directions: " + m));
        PullAfterFreeDirections.TABLE.mismatches(pullAfterFree).forEach(m -> all.add("a READ outlives its blocks: " + m));
        return all;
    }

    /** The page: both tables, then the verdict against the expected matrix. */
    public String toMarkdown() {
        long interleavings = FixDirectionMatrix.stepInterleavings();
        List<String> mismatches = mismatches();
        StringBuilder md = new StringBuilder();
        md.append("# Fix-direction matrices\n\n")
                .append("Written by the race catalogue (`./catalogue`, via `vllmrace.lincheck.connector.FixDirectionsReport`); ")
                .append("do not edit by hand.\n\n")
                .append("Seed 003's scenario (LateLoadCompletionUnion with its aggravating factor PullIntoFreedBlocks, ")
                .append("`LateLoadCompletionUnionScenario`) under each on/off combination of three fix directions, every other fix ON: ")
                .append("(1) = MULTI_CONNECTOR_LOAD_DEDUP, (2) = NIXL_PIN_PULL_BLOCKS, (3) = SCHEDULER_SKIP_LATE_REPORT. ")
                .append("The two actors have ").append(interleavings).append(" step-level interleavings (each step atomic).\n\n")
                .append("**Against the expected matrix** (`FixDirectionMatrix.EXPECTED`, also asserted by `FixDirectionMatrixTest`): ")
                .append(mismatches.isEmpty() ? "both tables match it." : "MISMATCH in " + mismatches.size() + " cell(s):")
                .append('\n');
        mismatches.forEach(m -> md.append("- ").append(m).append('\n'));

        md.append("\n## Lincheck 3.7 model checking\n\n")
                .append("One model-checking run per combination, ").append(budget).append(" invocations each. In every ")
                .append("invocation the arbiter runs the system to quiescence and records which invariants broke; it never ")
                .append("fails the run, so Lincheck explores the whole budget. **yes** = held in every invocation explored; ")
                .append("**NO** (k) = broken in k of them. A bounded check under sequential consistency: the last column says ")
                .append("how many of the ").append(interleavings).append(" step-level interleavings the explored invocations were.\n\n");
        table(md, lincheck, row -> row.invocations() + " invocations explored, " + row.distinctSchedules() + " of "
                + interleavings + " step interleavings");

        md.append("\n## Cross-check: every step-level interleaving\n\n")
                .append("The same scenario without Lincheck (`FixDirectionMatrix.computeExhaustive`): each of the ")
                .append(interleavings).append(" interleavings of the two actors' atomic steps run on a fresh model. ")
                .append("**NO** (k) = broken in k of them.\n\n");
        table(md, exhaustive, row -> row.invocations() + " interleavings");
        md.append('\n').append(HandleReportDirections.toMarkdown(handles));
        md.append('\n').append(PullAfterFreeDirections.TABLE.toMarkdown(pullAfterFree));
        return md.toString();
    }

    private static void table(StringBuilder md, List<Row> rows, Function<Row, String> explored) {
        md.append("| (1) | (2) | (3) |");
        for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
            md.append(' ').append(invariant.label()).append(" |");
        }
        md.append(" explored |\n|---|---|---|");
        for (int i = 0; i < SeedThreeInvariant.values().length; i++) {
            md.append("---|");
        }
        md.append("---|\n");
        for (Row row : rows) {
            FixDirectionMatrix.Combination c = row.combination();
            md.append("| ").append(FixDirectionMatrix.onOff(c.loadDedup())).append(" | ")
                    .append(FixDirectionMatrix.onOff(c.pinPullBlocks())).append(" | ")
                    .append(FixDirectionMatrix.onOff(c.skipLateReport())).append(" |");
            for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
                md.append(' ').append(row.holds(invariant) ? "yes" : "**NO** (" + row.violating().get(invariant) + ")").append(" |");
            }
            md.append(' ').append(explored.apply(row)).append(" |\n");
        }
    }

    /** Writes {@link #toMarkdown} to {@code resultsDir/fix-directions.md}; returns the path. */
    public Path write(Path resultsDir) {
        Path out = resultsDir.resolve("fix-directions.md");
        try {
            Files.writeString(out, toMarkdown());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /**
     * {@code [resultsDir]}: computes both matrices, writes the page, prints the differences from the expected matrix
     * and exits non-zero if there are any. Run with the lincheck-tests classpath.
     */
    public static void main(String[] args) {
        Path dir = args.length > 0 ? Path.of(args[0]) : ResultsDir.get();
        FixDirectionsReport report = compute();
        System.out.println("wrote " + report.write(dir));
        report.mismatches().forEach(m -> System.out.println("MISMATCH " + m));
        System.exit(report.mismatches().isEmpty() ? 0 : 1);
    }
}
