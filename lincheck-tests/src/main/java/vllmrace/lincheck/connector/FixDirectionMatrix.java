package vllmrace.lincheck.connector;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.AllInterleavings;
import vllmrace.races.connector.LateLoadCompletionScenario;
import vllmrace.races.connector.SeedThreeInvariant;

/**
 * Seed 003's fix-direction matrix (reference/race-catalogue.md): for each of the 8 on/off combinations of
 * {@link Fix#MULTI_CONNECTOR_LOAD_DEDUP} (1), {@link Fix#NIXL_PIN_PULL_BLOCKS} (2) and
 * {@link Fix#SCHEDULER_SKIP_LATE_REPORT} (3) — every other fix ON — Lincheck model-checks seed 003's scenario once per
 * {@link SeedThreeInvariant} and records whether the invariant held in every explored interleaving. Bounded: "holds"
 * means no violation among the interleavings explored (each cell's invocation count is in its row).
 */
public final class FixDirectionMatrix {
    /**
     * Invocations per cell (32 cells). A violated invariant shows within a few invocations (about a third of the
     * scenario's 210 step-level interleavings break it); a held one is a bounded check, cross-checked by
     * {@link #computeExhaustive()}, which runs every step-level interleaving directly on the model.
     */
    public static final int CELL_BUDGET = 40;

    /** The three seed-003 directions, in the seed's order. */
    public static final List<Fix> DIRECTIONS = List.of(Fix.MULTI_CONNECTOR_LOAD_DEDUP, Fix.NIXL_PIN_PULL_BLOCKS,
            Fix.SCHEDULER_SKIP_LATE_REPORT);

    private FixDirectionMatrix() {
    }

    /**
     * One combination.
     *
     * @param loadDedup      direction (1) ON
     * @param pinPullBlocks  direction (2) ON
     * @param skipLateReport direction (3) ON
     * @param holds          for each invariant, whether it held in every explored interleaving
     * @param invocations    for each invariant, the interleavings Lincheck explored (up to the first violation)
     */
    public record Row(boolean loadDedup, boolean pinPullBlocks, boolean skipLateReport,
                      Map<SeedThreeInvariant, Boolean> holds, Map<SeedThreeInvariant, Long> invocations) {
        public Row {
            holds = Map.copyOf(holds);
            invocations = Map.copyOf(invocations);
        }

        /** The fixes ON in this row: every fix, minus the directions that are off. */
        public FixSet fixes() {
            return FixDirectionMatrix.fixes(loadDedup, pinPullBlocks, skipLateReport);
        }

        public boolean holds(SeedThreeInvariant invariant) {
            return holds.get(invariant);
        }
    }

    /** The fixes of one combination. */
    public static FixSet fixes(boolean loadDedup, boolean pinPullBlocks, boolean skipLateReport) {
        FixSet fixes = FixSet.all();
        if (!loadDedup) {
            fixes = fixes.without(Fix.MULTI_CONNECTOR_LOAD_DEDUP);
        }
        if (!pinPullBlocks) {
            fixes = fixes.without(Fix.NIXL_PIN_PULL_BLOCKS);
        }
        if (!skipLateReport) {
            fixes = fixes.without(Fix.SCHEDULER_SKIP_LATE_REPORT);
        }
        return fixes;
    }

    /** Computes the 8 rows (all directions off first; the bits are (1), (2), (3) from least significant). */
    public static List<Row> compute() {
        return compute(LincheckRun.scaled(CELL_BUDGET));
    }

    /** Computes the 8 rows with {@code budget} invocations per cell. */
    public static List<Row> compute(int budget) {
        List<Row> rows = new ArrayList<>();
        for (int mask = 0; mask < 8; mask++) {
            boolean dedup = (mask & 1) != 0;
            boolean pin = (mask & 2) != 0;
            boolean skip = (mask & 4) != 0;
            Map<SeedThreeInvariant, Boolean> holds = new EnumMap<>(SeedThreeInvariant.class);
            Map<SeedThreeInvariant, Long> invocations = new EnumMap<>(SeedThreeInvariant.class);
            for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
                LincheckResult result = checkCell(fixes(dedup, pin, skip), invariant, budget);
                if (result.invocations() == 0) {
                    throw new IllegalStateException("Lincheck explored nothing for " + invariant + " under " + fixes(dedup, pin, skip));
                }
                holds.put(invariant, !result.failed());
                invocations.put(invariant, result.invocations());
            }
            rows.add(new Row(dedup, pin, skip, holds, invocations));
        }
        return rows;
    }

    /**
     * The same matrix without Lincheck: every step-level interleaving of the scenario's two actors
     * ({@link AllInterleavings}), run directly on the model. Invocations = the number of interleavings.
     */
    public static List<Row> computeExhaustive() {
        List<Row> rows = new ArrayList<>();
        for (int mask = 0; mask < 8; mask++) {
            boolean dedup = (mask & 1) != 0;
            boolean pin = (mask & 2) != 0;
            boolean skip = (mask & 4) != 0;
            FixSet fixes = fixes(dedup, pin, skip);
            List<LateLoadCompletionScenario> runs = new ArrayList<>();
            Map<?, Integer> outcomes = AllInterleavings.outcomes(() -> {
                LateLoadCompletionScenario s = new LateLoadCompletionScenario(fixes);
                runs.add(s);
                return s;
            });
            long n = outcomes.values().stream().mapToLong(Integer::longValue).sum();
            Map<SeedThreeInvariant, Boolean> holds = new EnumMap<>(SeedThreeInvariant.class);
            Map<SeedThreeInvariant, Long> invocations = new EnumMap<>(SeedThreeInvariant.class);
            for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
                holds.put(invariant, runs.stream().allMatch(s -> invariant.holds(s.rig().violations())));
                invocations.put(invariant, n);
            }
            rows.add(new Row(dedup, pin, skip, holds, invocations));
        }
        return rows;
    }

    /** One cell: does {@code invariant} hold in every interleaving Lincheck explores under {@code fixes}? */
    public static LincheckResult checkCell(FixSet fixes, SeedThreeInvariant invariant, int budget) {
        SeedThreeUnderCheck.configure(fixes, invariant);
        ModelCheckingOptions options = LincheckRun.modelChecking(budget)
                // the arbiter runs alone after both threads: nothing to interleave, so its accesses need no tracking
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(SeedThreeUnderCheck.class.getName()).methods("arbiter").ignore())
                .iterations(0)
                .addCustomScenario(LincheckRun.scenario(List.of(),
                        List.of(LincheckRun.call(SeedThreeUnderCheck.class, "actor1")),
                        List.of(LincheckRun.call(SeedThreeUnderCheck.class, "actor2")),
                        List.of(LincheckRun.call(SeedThreeUnderCheck.class, "arbiter"))))
                .sequentialSpecification(SeedThreeUnderCheck.InvariantHolds.class);
        return LincheckRun.check("seed 003 " + invariant + " " + fixes, SeedThreeUnderCheck.class, options, budget);
    }

    /** The matrix as a Markdown table (one row per combination, ✓ = held in every explored interleaving). */
    public static String toMarkdown(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("# Seed 003 fix-direction matrix\n\n")
                .append("Computed by `vllmrace.lincheck.connector.FixDirectionMatrix` (`compute()`: Lincheck 3.7 model checking;\n")
                .append("`computeExhaustive()`: every step-level interleaving run on the model) on the LateLoadCompletionUnion /\n")
                .append("PullIntoFreedBlocks scenario, every other fix ON. (1) = MULTI_CONNECTOR_LOAD_DEDUP,\n")
                .append("(2) = NIXL_PIN_PULL_BLOCKS, (3) = SCHEDULER_SKIP_LATE_REPORT. yes = held in every interleaving explored\n")
                .append("(bounded check; invocations per cell in the last column).\n\n")
                .append("| (1) | (2) | (3) |");
        for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
            sb.append(' ').append(invariant.label()).append(" |");
        }
        sb.append(" invocations |\n|---|---|---|");
        for (int i = 0; i < SeedThreeInvariant.values().length; i++) {
            sb.append("---|");
        }
        sb.append("---|\n");
        for (Row row : rows) {
            sb.append("| ").append(onOff(row.loadDedup())).append(" | ").append(onOff(row.pinPullBlocks())).append(" | ")
                    .append(onOff(row.skipLateReport())).append(" |");
            List<String> counts = new ArrayList<>();
            for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
                sb.append(' ').append(row.holds(invariant) ? "yes" : "NO").append(" |");
                counts.add(String.valueOf(row.invocations().get(invariant)));
            }
            sb.append(' ').append(String.join("/", counts)).append(" |\n");
        }
        return sb.toString();
    }

    /** Writes {@link #toMarkdown} to {@code resultsDir/fix-directions.md}; returns the path. */
    public static Path write(Path resultsDir, List<Row> rows) {
        Path out = resultsDir.resolve("fix-directions.md");
        try {
            Files.writeString(out, toMarkdown(rows));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static String onOff(boolean on) {
        return on ? "on" : "off";
    }
}
