package vllmrace.lincheck.connector;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.model.fix.Fix;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.FixSet;
import vllmrace.races.AllInterleavings;
import vllmrace.races.connector.LateLoadCompletionUnionScenario;
import vllmrace.races.connector.SeedThreeInvariant;

/**
 * Seed 003's fix-direction matrix (docs/lifecycle.md §3(b)): for each of the 8 on/off combinations of
 * {@link Fix#MULTI_CONNECTOR_LOAD_DEDUP} (1), {@link Fix#NIXL_PIN_PULL_BLOCKS} (2) and
 * {@link Fix#SCHEDULER_SKIP_LATE_REPORT} (3) — every other fix ON — which of the four {@link SeedThreeInvariant}s hold
 * in seed 003's scenario ({@link LateLoadCompletionUnionScenario}). Computed two ways, both checked against
 * {@link #EXPECTED}: {@link #compute()}, one Lincheck model-checking run per combination (bounded: "holds" means no
 * violation in the invocations explored), and {@link #computeExhaustive()}, every step-level interleaving run directly
 * on the model.
 */
public final class FixDirectionMatrix {
    /**
     * Lincheck invocations per combination (8 runs). Measured on this scenario: the 40 invocations are 18 of the 210
     * step-level interleavings (Lincheck's exploration is deterministic), and every invariant {@link #EXPECTED} to break
     * breaks in at least 3 of them (FixDirectionMatrixTest asserts the matrix); the exhaustive cross-check covers all
     * 210. The deep profile multiplies it ({@link LincheckRun#scaled}; measured: 400 invocations were 89 of them).
     */
    public static final int COMBINATION_BUDGET = 40;

    /** The matrix belongs to the shard of the race whose scenario it runs. */
    public static boolean inShard(vllmrace.races.Shard shard) {
        return shard.includes(vllmrace.races.Race.LateLoadCompletionUnion);
    }

    /**
     * The deployment the matrix is about: one whose LMCache child loads without being chosen (LMCache's own MP connector;
     * vLLM's in-tree one before #47505), so the second load exists and the three directions have something to close.
     */
    public static final Configuration DEPLOYMENT = Profile.MAIN_OOT_LMCACHE.configuration();

    /** A fresh seed-003 scenario under {@code fixes} on {@link #DEPLOYMENT}. */
    public static LateLoadCompletionUnionScenario scenario(FixSet fixes) {
        return new LateLoadCompletionUnionScenario(fixes, DEPLOYMENT, vllmrace.races.Params.DEFAULT);
    }

    /** The three seed-003 directions, in the seed's order. */
    public static final List<Fix> DIRECTIONS = List.of(Fix.MULTI_CONNECTOR_LOAD_DEDUP, Fix.NIXL_PIN_PULL_BLOCKS,
            Fix.SCHEDULER_SKIP_LATE_REPORT);

    /** One on/off combination of the three directions. */
    public record Combination(boolean loadDedup, boolean pinPullBlocks, boolean skipLateReport) {
        /** The 8 combinations, all directions off first; the bits are (1), (2), (3) from least significant. */
        public static List<Combination> all() {
            return IntStream.range(0, 8).mapToObj(mask -> new Combination((mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0)).toList();
        }

        /** The fixes ON: every fix, minus the directions that are off. */
        public FixSet fixes() {
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

        @Override
        public String toString() {
            return "(1) " + onOff(loadDedup) + ", (2) " + onOff(pinPullBlocks) + ", (3) " + onOff(skipLateReport);
        }
    }

    /**
     * One combination's result.
     *
     * @param violating          per invariant, the invocations (or interleavings) that broke it
     * @param invocations        the invocations Lincheck explored (or, exhaustive, the step-level interleavings run)
     * @param distinctSchedules  how many different step-level interleavings those invocations were
     */
    public record Row(Combination combination, Map<SeedThreeInvariant, Long> violating, long invocations, long distinctSchedules) {
        public Row {
            violating = Map.copyOf(violating);
        }

        /** Held in every invocation explored. */
        public boolean holds(SeedThreeInvariant invariant) {
            return violating.get(invariant) == 0;
        }
    }

    /**
     * The expected matrix, one entry per {@link Combination#all()} in that order: which invariants hold. The
     * catalogue's expected shape: (3) alone keeps the engine alive but still lets the pull write into freed blocks.
     * Beyond it: (2) alone does NOT keep the engine alive (a late recv landing while R runs fails
     * {@code assert RequestStatus.is_finished}); only (1) gives exactly one transfer event.
     */
    public static final List<Map<SeedThreeInvariant, Boolean>> EXPECTED = List.of(
            //       alive  no write into freed  no leak  exactly one terminal event       (1)  (2)  (3)
            expected(false, false, true, false), // off  off  off
            expected(true, true, true, true), //    on   off  off
            expected(false, true, true, false), //  off  on   off
            expected(true, true, true, true), //    on   on   off
            expected(true, false, true, false), //  off  off  on
            expected(true, true, true, true), //    on   off  on
            expected(true, true, true, false), //   off  on   on
            expected(true, true, true, true)); //   on   on   on

    private FixDirectionMatrix() {
    }

    private static Map<SeedThreeInvariant, Boolean> expected(boolean alive, boolean noWrite, boolean noLeak, boolean oneEvent) {
        Map<SeedThreeInvariant, Boolean> holds = new EnumMap<>(SeedThreeInvariant.class);
        holds.put(SeedThreeInvariant.ENGINE_ALIVE, alive);
        holds.put(SeedThreeInvariant.NO_WRITE_INTO_FREED_BLOCK, noWrite);
        holds.put(SeedThreeInvariant.NO_LEAK, noLeak);
        holds.put(SeedThreeInvariant.EXACTLY_ONE_TERMINAL_EVENT, oneEvent);
        return Map.copyOf(holds);
    }

    /**
     * Where {@code rows} differ from {@link #EXPECTED}, one line per differing cell; also flags a row that ran
     * nothing (a vacuous cell). Empty when the matrix is the expected one.
     */
    public static List<String> mismatches(List<Row> rows) {
        List<String> mismatches = new ArrayList<>();
        List<Combination> combinations = Combination.all();
        if (rows.size() != combinations.size()) {
            return List.of(rows.size() + " rows, expected " + combinations.size());
        }
        for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            if (!row.combination().equals(combinations.get(i))) {
                mismatches.add("row " + i + " is " + row.combination() + ", expected " + combinations.get(i));
                continue;
            }
            if (row.invocations() <= 0) {
                mismatches.add(row.combination() + ": nothing explored (vacuous)");
                continue;
            }
            for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
                boolean expected = EXPECTED.get(i).get(invariant);
                if (row.holds(invariant) != expected) {
                    mismatches.add(row.combination() + ": " + invariant.label() + " expected " + (expected ? "to hold" : "broken")
                            + ", " + (row.holds(invariant) ? "held in all " + row.invocations()
                            : "broken in " + row.violating().get(invariant) + " of " + row.invocations()));
                }
            }
        }
        return mismatches;
    }

    /** Computes the 8 rows with Lincheck, {@link #COMBINATION_BUDGET} invocations each (scaled by the deep profile). */
    public static List<Row> compute() {
        return compute(LincheckRun.scaled(COMBINATION_BUDGET));
    }

    /**
     * Computes the 8 rows with {@code budget} invocations per combination: one Lincheck run each. Throws when a run is
     * vacuous or its counts disagree (Lincheck built no instance, or invocations that never reached the arbiter), or
     * when Lincheck itself reported a failure (the arbiter never fails a run, so that is a harness or model error).
     */
    public static List<Row> compute(int budget) {
        List<Row> rows = new ArrayList<>();
        for (Combination combination : Combination.all()) {
            LincheckResult result = checkCombination(combination, budget);
            SeedThreeTally.Snapshot tally = SeedThreeTally.snapshot();
            if (result.failed()) {
                throw new IllegalStateException("Lincheck failed on " + combination + " (the arbiter never fails a run: "
                        + "a harness or model error):\n" + result.report());
            }
            if (result.invocations() == 0 || tally.runs() != result.invocations()) {
                throw new IllegalStateException("Lincheck built " + result.invocations() + " instance(s) under " + combination
                        + " but the arbiter checked " + tally.runs());
            }
            rows.add(new Row(combination, tally.violating(), tally.runs(), tally.distinctSchedules()));
        }
        return rows;
    }

    /** One Lincheck model-checking run of seed 003's scenario under {@code combination}; the verdicts are in the tally. */
    static LincheckResult checkCombination(Combination combination, int budget) {
        SeedThreeUnderCheck.configure(combination.fixes());
        SeedThreeTally.reset();
        ModelCheckingOptions options = LincheckRun.modelChecking(budget)
                // the accumulator must survive Lincheck's restoring of static state after each invocation, and the whole
                // arbiter runs in it (SeedThreeTally.judge): it runs alone after both threads, nothing to interleave, so its
                // accesses need no tracking (a guarantee on the operation itself, SeedThreeUnderCheck.arbiter, has no effect)
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(SeedThreeTally.class.getName()).allMethods().ignore())
                .iterations(0)
                .addCustomScenario(LincheckRun.scenario(List.of(),
                        List.of(LincheckRun.call(SeedThreeUnderCheck.class, "actor1")),
                        List.of(LincheckRun.call(SeedThreeUnderCheck.class, "actor2")),
                        List.of(LincheckRun.call(SeedThreeUnderCheck.class, "arbiter"))))
                .sequentialSpecification(SeedThreeUnderCheck.EveryRunChecked.class);
        return LincheckRun.check("seed 003 fix directions " + combination, SeedThreeUnderCheck.class, options, budget);
    }

    /**
     * The same matrix without Lincheck: every step-level interleaving of the scenario's two actors
     * ({@link AllInterleavings}), run directly on the model.
     */
    public static List<Row> computeExhaustive() {
        List<Row> rows = new ArrayList<>();
        for (Combination combination : Combination.all()) {
            FixSet fixes = combination.fixes();
            List<LateLoadCompletionUnionScenario> runs = new ArrayList<>();
            Map<?, Integer> outcomes = AllInterleavings.outcomes(() -> {
                LateLoadCompletionUnionScenario s = scenario(fixes);
                runs.add(s);
                return s;
            });
            long n = outcomes.values().stream().mapToLong(Integer::longValue).sum();
            List<LateLoadCompletionUnionScenario> schedules = runs.subList(runs.size() - (int) n, runs.size()); // minus the probe
            Map<SeedThreeInvariant, Long> violating = new EnumMap<>(SeedThreeInvariant.class);
            for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
                violating.put(invariant, schedules.stream().filter(s -> !invariant.holds(s.rig().violations())).count());
            }
            rows.add(new Row(combination, violating, n, n));
        }
        return rows;
    }

    /** How many step-level interleavings the scenario's two actors have: C(n1 + n2, n1). */
    public static long stepInterleavings() {
        LateLoadCompletionUnionScenario probe = scenario(FixSet.all());
        int n1 = probe.actor1().stepCount();
        int n2 = probe.actor2().stepCount();
        long c = 1;
        for (int i = 1; i <= n1; i++) {
            c = c * (n2 + i) / i;
        }
        return c;
    }

    static String onOff(boolean on) {
        return on ? "on" : "off";
    }
}
