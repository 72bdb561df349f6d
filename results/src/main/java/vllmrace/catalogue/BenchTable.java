package vllmrace.catalogue;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import vllmrace.races.Race;

/**
 * What {@code ./catalogue --bench} measured: per race, per engine, the timed runs on the reported variant and the one
 * run on the fixed variant. Plain data, filled by {@link BenchCommand} and read by {@link PerformancePage} and
 * {@link PerformancePlot}; the medians and ratios are computed here, never typed.
 */
final class BenchTable {

    /** The engines side by side: the suite's three, then the peers. */
    enum Tool {
        ENUMERATOR("enumerator", "interleavings", true),
        LINCHECK("Lincheck", "invocations", true),
        JCSTRESS("JCStress", "samples", true),
        LOOP("stress loop", "iterations", false),
        FRAY_POS("Fray POS", "iterations", false),
        FRAY_PCT("Fray PCT", "iterations", false);

        final String label;
        final String unit;
        /** An engine of this suite (the others are peers: what a user might pick instead). */
        final boolean suite;

        Tool(String label, String unit, boolean suite) {
            this.label = label;
            this.unit = unit;
            this.suite = suite;
        }
    }

    enum Status { FOUND, NOT_FOUND, ERROR }

    /**
     * One run. {@code count}: interleavings, invocations, samples or iterations explored (up to and including the first
     * violating one when found); {@code violating}: JCStress's violating samples (else 0 or 1); {@code detail}: the
     * violating outcome, the error, or what a clean run explored.
     */
    record Run(Status status, long count, long violating, double millis, String detail) {
        static Run found(long count, double millis, String outcome) {
            return new Run(Status.FOUND, count, 1, millis, outcome);
        }

        static Run notFound(long count, double millis, String detail) {
            return new Run(Status.NOT_FOUND, count, 0, millis, detail);
        }

        static Run error(long count, double millis, String detail) {
            return new Run(Status.ERROR, count, 0, millis, detail);
        }
    }

    /** An engine on one race's variant: its timed runs, or why it did not run ({@code notRun} non-null). */
    record Cell(List<Run> runs, String notRun) {
        static Cell notRun(String reason) {
            return new Cell(List.of(), reason);
        }

        boolean ran() {
            return notRun == null && !runs.isEmpty();
        }

        Run firstError() {
            return runs.stream().filter(r -> r.status() == Status.ERROR).findFirst().orElse(null);
        }

        long foundRuns() {
            return runs.stream().filter(r -> r.status() == Status.FOUND).count();
        }

        /**
         * The median time to the first counterexample, a run that found nothing counting as slower than any that did
         * (so with fewer than half the runs finding it, there is no median: +infinity); NaN when the engine did not run
         * or a run was an error.
         */
        double medianMillis() {
            if (!ran() || firstError() != null) {
                return Double.NaN;
            }
            List<Double> times = new ArrayList<>();
            runs.forEach(r -> times.add(r.status() == Status.FOUND ? r.millis() : Double.POSITIVE_INFINITY));
            return median(times);
        }

        /** The median count explored to the first counterexample, over the runs that found it (NaN if none). */
        double medianCount() {
            List<Double> counts = new ArrayList<>();
            runs.stream().filter(r -> r.status() == Status.FOUND).forEach(r -> counts.add((double) r.count()));
            return counts.isEmpty() ? Double.NaN : median(counts);
        }

        /** A finite median: the engine found the race in most runs, with no error. */
        boolean found() {
            double m = medianMillis();
            return !Double.isNaN(m) && !Double.isInfinite(m);
        }
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Double::compare);
        int n = sorted.size();
        if (n == 0) {
            return Double.NaN;
        }
        double a = sorted.get((n - 1) / 2);
        double b = sorted.get(n / 2);
        // with an even count and one middle value infinite, half the runs found nothing: no median
        return Double.isInfinite(a) || Double.isInfinite(b) ? Double.POSITIVE_INFINITY : (a + b) / 2;
    }

    /** The fixed variant's one run per engine, and whether the engine's exploration was exhaustive (counted by code). */
    record Fixed(Run run, String explored, boolean exhaustive) {
    }

    final Map<Race, Map<Tool, Cell>> reported = new LinkedHashMap<>();
    final Map<Race, Map<Tool, Fixed>> fixed = new LinkedHashMap<>();
    /** Why a tool did not run at all this time (Fray without its script or JDK 25), shown once on the page. */
    final Map<Tool, String> notRun = new EnumMap<>(Tool.class);

    void put(Race race, Tool tool, Cell cell) {
        reported.computeIfAbsent(race, r -> new EnumMap<>(Tool.class)).put(tool, cell);
    }

    void putFixed(Race race, Tool tool, Fixed run) {
        fixed.computeIfAbsent(race, r -> new EnumMap<>(Tool.class)).put(tool, run);
    }

    Cell cell(Race race, Tool tool) {
        Map<Tool, Cell> byTool = reported.get(race);
        Cell cell = byTool == null ? null : byTool.get(tool);
        return cell != null ? cell : Cell.notRun(notRun.getOrDefault(tool, "not run"));
    }

    /** The engine's median over the enumerator's for one race, or NaN when either has no finite median. */
    double ratioToEnumerator(Race race, Tool tool) {
        Cell mine = cell(race, tool);
        Cell base = cell(race, Tool.ENUMERATOR);
        if (!mine.found() || !base.found()) {
            return Double.NaN;
        }
        return mine.medianMillis() / Math.max(base.medianMillis(), 1e-3);
    }

    /** Per engine, the median of its per-race ratios to the enumerator (over races where both have a median). */
    double medianRatio(Tool tool) {
        List<Double> ratios = new ArrayList<>();
        for (Race race : reported.keySet()) {
            double r = ratioToEnumerator(race, tool);
            if (!Double.isNaN(r)) {
                ratios.add(r);
            }
        }
        return ratios.isEmpty() ? Double.NaN : median(ratios);
    }

    /** The engine with the lowest finite median on a race, or null. */
    Tool best(Race race) {
        Tool best = null;
        for (Tool tool : Tool.values()) {
            Cell c = cell(race, tool);
            if (c.found() && (best == null || c.medianMillis() < cell(race, best).medianMillis())) {
                best = tool;
            }
        }
        return best;
    }
}
