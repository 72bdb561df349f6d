package vllmrace.catalogue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import vllmrace.catalogue.BenchTable.Cell;
import vllmrace.catalogue.BenchTable.Fixed;
import vllmrace.catalogue.BenchTable.Tool;
import vllmrace.races.Race;

/** results/performance.md from a {@link BenchTable}: every figure and every claim computed from the table. */
final class PerformancePage {
    /** Issue 27's targets on this machine. */
    static final double BEST_TARGET_MS = 100;
    static final double LINCHECK_TARGET_MS = 1000;
    static final double ENUMERATOR_TARGET_MS = 10;

    /** How the run was made, and what it took. */
    static final class Meta {
        final int runs;
        final int loopSeconds;
        final int fixedSeconds;
        String jcstressSettings = "";
        final List<String> jcstressLaunches = new ArrayList<>();
        boolean frayRan;
        long inJvmMillis;
        long jcstressMillis;
        long frayMillis;
        long totalMillis;
        String lastCatalogue = "";
        String when = java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC).withNano(0).toString();
        String machine = Runtime.getRuntime().availableProcessors() + " CPUs, JDK " + System.getProperty("java.version");
        /** /proc/loadavg's 1-minute figure when the bench started and when it ended ("" where it cannot be read). */
        String loadAtStart = loadAverage();
        String loadAtEnd = "";

        Meta(int runs, int loopSeconds, int fixedSeconds) {
            this.runs = runs;
            this.loopSeconds = loopSeconds;
            this.fixedSeconds = fixedSeconds;
        }
    }

    private static boolean loaded(Meta meta) {
        try {
            int cpus = Runtime.getRuntime().availableProcessors();
            return Double.parseDouble(meta.loadAtStart) > cpus || Double.parseDouble(meta.loadAtEnd) > cpus;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The 1-minute load average from /proc/loadavg, or "" (not Linux). */
    static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    private final BenchTable table;
    private final Meta meta;

    PerformancePage(BenchTable table, Meta meta) {
        this.table = table;
        this.meta = meta;
    }

    static String ms(double millis) {
        if (Double.isNaN(millis)) {
            return "-";
        }
        if (millis < 1) {
            return String.format("%.2f ms", millis);
        }
        if (millis < 100) {
            return String.format("%.1f ms", millis);
        }
        if (millis < 1000) {
            return String.format("%.0f ms", millis);
        }
        return String.format("%.2f s", millis / 1000);
    }

    static String secs(double millis) {
        return String.format("%.1f", millis / 1000);
    }

    /** The median time of a cell, or why there is none. */
    static String time(Cell c, Meta meta) {
        if (!c.ran()) {
            return "not run";
        }
        if (c.firstError() != null) {
            return "ERROR";
        }
        int n = c.runs().size();
        long k = c.foundRuns();
        if (!c.found()) {
            boolean loop = c.runs().get(0).detail().startsWith("not found in");
            return (loop ? "not found in " + meta.loopSeconds + " s" : "not found") + (k == 0 ? "" : " (found in " + k + " of " + n + ")");
        }
        return ms(c.medianMillis()) + (k < n ? " (found in " + k + " of " + n + ")" : "");
    }

    private String cellText(Race race, Tool tool) {
        Cell c = table.cell(race, tool);
        String time = time(c, meta);
        if (!c.ran() || c.firstError() != null || !c.found()) {
            return time;
        }
        String count;
        if (tool == Tool.JCSTRESS) {
            long samples = c.runs().stream().mapToLong(BenchTable.Run::count).sum();
            long violating = c.runs().stream().mapToLong(BenchTable.Run::violating).sum();
            count = String.format("%,.0f per million", violating * 1e6 / Math.max(1, samples));
        } else {
            count = String.format("%,.0f", c.medianCount());
        }
        double ratio = table.ratioToEnumerator(race, tool);
        return count + " · " + time + (tool == Tool.ENUMERATOR || Double.isNaN(ratio) ? "" : " · " + ratio(ratio));
    }

    static String ratio(double r) {
        return r >= 100 ? String.format("×%,.0f", r) : r >= 10 ? String.format("×%.0f", r) : String.format("×%.1f", r);
    }

    String render() {
        List<Race> reported = new ArrayList<>(table.reported.keySet());
        StringBuilder md = new StringBuilder("# Performance beside its peers\n\n");
        md.append("Written by `./catalogue --bench` (").append(meta.when).append(", ").append(meta.machine)
                .append(meta.loadAtStart.isEmpty() ? "" : ", 1-minute load average " + meta.loadAtStart + " at the start and "
                        + meta.loadAtEnd + " at the end" + (loaded(meta) ? ": other work shared the CPUs, so times are "
                        + "those of a loaded machine" : ""))
                .append("); do not edit by hand. ").append(reported.size()).append(" reported variant(s), ")
                .append(table.fixed.size()).append(" fixed. Time to the first counterexample per race and engine, medians of ")
                .append(meta.runs).append(" timed run(s); the plot is [performance.svg](performance.svg).\n\n");
        method(md);
        targets(md, reported);
        summary(md, reported);
        reportedTable(md, reported);
        fixedTable(md);
        errors(md);
        wallTimes(md);
        return md.toString();
    }

    private void method(StringBuilder md) {
        md.append("## How it was measured\n\n")
                .append("- **Warm-up.** In the catalogue's JVM, per race and engine: one untimed warm-up run, then ").append(meta.runs)
                .append(" timed runs, engine after engine (enumerator, Lincheck, stress loop); the fixed variant's one run per engine ")
                .append("follows the reported variant's runs of the same engine (Lincheck's after a warm-up of its own).\n")
                .append("- **Step enumerator**: the schedules in enumeration order, each on a fresh scenario, stopping at the first ")
                .append("violating one (interleavings counted up to and including it); at the family's default point.\n")
                .append("- **Lincheck** 3.7 model checking with the catalogue's budget: the invocation of the first violating run, and ")
                .append("the time of Lincheck's whole check (it stops there; the suite's step-sequence count made first to size the ")
                .append("budget is not included).\n")
                .append("- **JCStress** (").append(meta.jcstressSettings).append("): ").append(meta.runs)
                .append(" launch(es), every selected race in one launch as the catalogue launches it, no relaunch; the first also ")
                .append("runs the fixed variants. JCStress forks fresh JVMs and warms up in its own iterations, so no warm-up of ours ")
                .append("applies. It reports a test only when its fork ends and does not time the first violating sample: its time ")
                .append("is the test's share of its launch (launch wall time / tests), and its count the violating samples per ")
                .append("million over the launches. ").append(String.join("; ", meta.jcstressLaunches)).append(".\n")
                .append("- **Stress loop** (a peer: what a user writes without a tool): per iteration a fresh scenario, two fresh ")
                .append("threads running actor 1 and actor 2, both joined, then the judge; until the first violating outcome or ")
                .append(meta.loopSeconds).append(" s (`--time`; fixed variants `--fixed-time`, ").append(meta.fixedSeconds).append(" s).\n")
                .append("- **Fray** (a peer; POS and PCT) through `").append(BenchCommand.FRAY_SCRIPT)
                .append("` in its own JVM on JDK 25, warm-up as that script does it: ");
        String reason = table.notRun.get(Tool.FRAY_POS);
        md.append(reason != null ? "**Fray: not run (" + reason + ").**" : meta.frayRan ? "ran (" + ms(meta.frayMillis) + ")." : "not run.")
                .append("\n")
                .append("- A modelling error (the judge's modelling-error outcome, an actor that throws) is never a find: it is an ")
                .append("ERROR here. A run that finds nothing counts as slower than any that finds the race, so the median says ")
                .append("\"not found\" when fewer than half the runs found it.\n\n");
    }

    private void targets(StringBuilder md, List<Race> reported) {
        md.append("## Issue 27's targets (computed from the runs above)\n\n");
        List<String> bestMiss = new ArrayList<>();
        List<String> linMiss = new ArrayList<>();
        List<String> enumMiss = new ArrayList<>();
        for (Race race : reported) {
            Tool best = table.best(race);
            if (best == null || table.cell(race, best).medianMillis() > BEST_TARGET_MS) {
                bestMiss.add(race.name() + (best == null ? " (no engine found it)" : " (" + best.label + ", " + ms(table.cell(race, best).medianMillis()) + ")"));
            }
            Cell lin = table.cell(race, Tool.LINCHECK);
            if (lin.ran() && (!lin.found() || lin.medianMillis() > LINCHECK_TARGET_MS)) {
                linMiss.add(race.name() + (lin.found() ? " (" + ms(lin.medianMillis()) + ", " + ms(lin.medianMillis() - LINCHECK_TARGET_MS)
                        + " over)" : " (" + time(lin, meta) + ")"));
            }
            Cell en = table.cell(race, Tool.ENUMERATOR);
            if (en.ran() && (!en.found() || en.medianMillis() > ENUMERATOR_TARGET_MS)) {
                enumMiss.add(race.name() + " reported (" + time(en, meta) + ")");
            }
        }
        for (Map.Entry<Race, Map<Tool, Fixed>> e : table.fixed.entrySet()) {
            Fixed f = e.getValue().get(Tool.ENUMERATOR);
            if (f != null && f.run().millis() > ENUMERATOR_TARGET_MS) {
                enumMiss.add(e.getKey().name() + " fixed (" + ms(f.run().millis()) + ")");
            }
        }
        int fixedCount = (int) table.fixed.values().stream().filter(m -> m.containsKey(Tool.ENUMERATOR)).count();
        md.append(line("Every reported race found by the best engine within 100 ms after warm-up", reported.size(), bestMiss));
        md.append(line("Lincheck within 1 s each after warm-up", (int) reported.stream().filter(r -> table.cell(r, Tool.LINCHECK).ran()).count(), linMiss));
        md.append(line("The enumerator within 10 ms per race-variant", reported.size() + fixedCount, enumMiss));
        md.append("\n");
    }

    private static String line(String target, int of, List<String> misses) {
        return "- " + target + ": " + (misses.isEmpty() ? "**met** (" + of + " of " + of + ")."
                : "**missed** by " + misses.size() + " of " + of + ": " + String.join("; ", misses) + ".") + "\n";
    }

    private void summary(StringBuilder md, List<Race> reported) {
        md.append("## Summary\n\n| engine | median ratio of its median time to the enumerator's, across races | races with a ratio | races it missed in some run (its bound) |\n|---|---|---|---|\n");
        for (Tool tool : Tool.values()) {
            long withRatio = reported.stream().filter(r -> !Double.isNaN(table.ratioToEnumerator(r, tool))).count();
            List<String> missed = new ArrayList<>();
            for (Race r : reported) {
                Cell c = table.cell(r, tool);
                long notFound = c.runs().stream().filter(run -> run.status() == BenchTable.Status.NOT_FOUND).count();
                if (c.ran() && notFound > 0) {
                    missed.add(r.name() + " (" + notFound + " of " + c.runs().size() + " runs)");
                }
            }
            boolean ran = reported.stream().anyMatch(r -> table.cell(r, tool).ran());
            md.append("| ").append(tool.label).append(" | ")
                    .append(!ran ? "not run" : tool == Tool.ENUMERATOR ? "1 (the base)" : Double.isNaN(table.medianRatio(tool)) ? "-" : ratio(table.medianRatio(tool)))
                    .append(" | ").append(ran ? String.valueOf(withRatio) : "-").append(" | ")
                    .append(!ran ? "-" : missed.isEmpty() ? "none" : String.join(", ", missed) + bound(tool)).append(" |\n");
        }
        md.append("\n");
        List<String> beatLincheck = new ArrayList<>();
        List<String> beats = new ArrayList<>();
        for (Race race : reported) {
            List<String> peersBeatingLincheck = new ArrayList<>();
            for (Tool peer : Tool.values()) {
                if (peer.suite || !table.cell(race, peer).found()) {
                    continue;
                }
                double p = table.cell(race, peer).medianMillis();
                List<String> beaten = new ArrayList<>();
                for (Tool engine : Tool.values()) {
                    Cell e = table.cell(race, engine);
                    if (engine.suite && e.ran() && e.firstError() == null && (!e.found() || p < e.medianMillis())) {
                        beaten.add(engine.label + " (" + time(e, meta) + ")");
                        if (engine == Tool.LINCHECK) {
                            peersBeatingLincheck.add(peer.label);
                        }
                    }
                }
                if (!beaten.isEmpty()) {
                    beats.add(race.name() + ": " + peer.label + " (" + ms(p) + ") beats " + String.join(", ", beaten));
                }
            }
            if (!peersBeatingLincheck.isEmpty()) {
                beatLincheck.add(race.name() + " (" + String.join(", ", peersBeatingLincheck) + ")");
            }
        }
        md.append("Races a peer finds faster than Lincheck: ").append(beatLincheck.isEmpty() ? "none" : String.join("; ", beatLincheck))
                .append(".\n\n");
        md.append("Where a peer beats an engine of the suite (median time to the first counterexample):\n\n");
        if (beats.isEmpty()) {
            md.append("- nowhere in this run.\n");
        }
        beats.forEach(b -> md.append("- ").append(b).append("\n"));
        md.append("\n");
    }

    private String bound(Tool tool) {
        return switch (tool) {
            case LOOP -> " (in " + meta.loopSeconds + " s)";
            case LINCHECK -> " (in its budget)";
            case JCSTRESS -> " (in a launch)";
            case ENUMERATOR -> " (in every interleaving)";
            default -> " (in its budget)";
        };
    }

    private void reportedTable(StringBuilder md, List<Race> reported) {
        md.append("## Reported variants: to the first counterexample\n\n")
                .append("Each cell: median count to the first violating run (interleavings, invocations, iterations; JCStress: ")
                .append("violating samples per million) · median time · ratio to the enumerator's median time.\n\n")
                .append("| race |");
        for (Tool tool : Tool.values()) {
            md.append(' ').append(tool.label).append(" |");
        }
        md.append(" best |\n|---|").append("---|".repeat(Tool.values().length)).append("---|\n");
        for (Race race : reported) {
            md.append("| ").append(race.name()).append(" |");
            for (Tool tool : Tool.values()) {
                md.append(' ').append(cellText(race, tool)).append(" |");
            }
            Tool best = table.best(race);
            md.append(' ').append(best == null ? "-" : best.label).append(" |\n");
        }
        md.append("\n");
    }

    private void fixedTable(StringBuilder md) {
        md.append("## Fixed variants: what each engine explored, in how long\n\n")
                .append("One run per engine. Exhaustive only where the code counted every interleaving (the enumerator); Lincheck's ")
                .append("model check is bounded under sequential consistency; JCStress, the loop and Fray sample.\n\n")
                .append("| race | engine | explored | time | exhaustive |\n|---|---|---|---|---|\n");
        for (Map.Entry<Race, Map<Tool, Fixed>> e : table.fixed.entrySet()) {
            for (Map.Entry<Tool, Fixed> f : e.getValue().entrySet()) {
                BenchTable.Run run = f.getValue().run();
                String explored = switch (run.status()) {
                    case NOT_FOUND -> f.getValue().explored();
                    case FOUND -> "**" + run.detail() + "**";
                    case ERROR -> "ERROR: " + run.detail();
                };
                md.append("| ").append(e.getKey().name()).append(" | ").append(f.getKey().label).append(" | ")
                        .append(explored.replace("|", "\\|").replace("\n", " ")).append(" | ").append(ms(run.millis())).append(" | ")
                        .append(f.getValue().exhaustive() && run.status() == BenchTable.Status.NOT_FOUND ? "yes" : "no").append(" |\n");
            }
        }
        md.append("\n");
    }

    private void errors(StringBuilder md) {
        List<String> errors = new ArrayList<>();
        table.reported.forEach((race, cells) -> cells.forEach((tool, cell) -> {
            if (cell.firstError() != null) {
                errors.add(race.name() + " [" + tool.label + ", reported]: " + cell.firstError().detail());
            }
        }));
        md.append("## Errors\n\n").append(errors.isEmpty() ? "No modelling error or harness error in any run.\n"
                : errors.stream().map(e -> "- " + e.replace("\n", " ")).collect(Collectors.joining("\n")) + "\n").append("\n");
    }

    private void wallTimes(StringBuilder md) {
        md.append("## Wall times\n\n")
                .append("- This bench: ").append(Progress.clock(meta.totalMillis)).append(" in all (in-JVM engines ")
                .append(Progress.clock(meta.inJvmMillis)).append(", JCStress launches ").append(Progress.clock(meta.jcstressMillis))
                .append(", Fray ").append(Progress.clock(meta.frayMillis)).append(").\n")
                .append("- The catalogue (`./catalogue`), as its last run recorded it: ").append(meta.lastCatalogue).append("\n")
                .append("- `mvn -B verify`: not measured by this command (it would build and test the suite inside itself). ")
                .append("It is measured as a whole process with `farm-bench` and reported in the issue's note, not on this page.\n");
    }

    /**
     * The last catalogue run's own timings from results/verdicts.tsv and linearizability.tsv (each row keeps the wall time
     * the catalogue measured): enumerator and Lincheck rows summed, the JCStress launch (its longest row), the
     * linearizability cells summed.
     */
    static String lastCatalogue(Path results) {
        try {
            long enumerator = 0;
            long lincheck = 0;
            long jcstress = 0;
            long linearizability = 0;
            Path verdicts = results.resolve("verdicts.tsv");
            if (!Files.exists(verdicts)) {
                return "no results/verdicts.tsv yet.";
            }
            for (String line : Files.readAllLines(verdicts).subList(1, Files.readAllLines(verdicts).size())) {
                String[] f = line.split("\t", -1);
                if (f.length < 9 || !f[8].matches("\\d+")) {
                    continue;
                }
                long wall = Long.parseLong(f[8]);
                switch (f[1]) {
                    case "every interleaving" -> enumerator += wall;
                    case "Lincheck" -> lincheck += wall;
                    case "JCStress" -> jcstress = Math.max(jcstress, wall);
                    default -> { }
                }
            }
            Path lin = results.resolve("linearizability.tsv");
            if (Files.exists(lin)) {
                List<String> lines = Files.readAllLines(lin);
                for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                    String[] f = line.split("\t", -1);
                    if (f.length >= 6 && f[5].matches("\\d+")) {
                        linearizability += Long.parseLong(f[5]);
                    }
                }
            }
            return String.format("every-interleaving cells %s, Lincheck cells %s, the JCStress launch (relaunches included) %s, "
                    + "linearizability cells %s: %s of engine time, from the wall times it wrote to results/verdicts.tsv and "
                    + "linearizability.tsv (start-up, the fix-switch matrix and the pages it writes are not among them).",
                    Progress.clock(enumerator), Progress.clock(lincheck), Progress.clock(jcstress), Progress.clock(linearizability),
                    Progress.clock(enumerator + lincheck + jcstress + linearizability));
        } catch (IOException e) {
            return "unreadable (" + e.getMessage() + ").";
        }
    }
}
