package vllmrace.catalogue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import vllmrace.catalogue.BenchTable.Cell;
import vllmrace.catalogue.BenchTable.Fixed;
import vllmrace.catalogue.BenchTable.Run;
import vllmrace.catalogue.BenchTable.Tool;
import vllmrace.lincheck.verdict.LincheckVerdicts;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.races.AllInterleavings;
import vllmrace.races.Expectation;
import vllmrace.races.Observed;
import vllmrace.races.Params;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RaceScenario;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;
import vllmrace.races.derive.JcstressNames;
import vllmrace.stress.verdict.JcstressResults;
import vllmrace.stress.verdict.JcstressRun;
import vllmrace.stress.verdict.JcstressVerdicts;

/**
 * {@code ./catalogue --bench [RACE...]}: how fast each engine finds each race, side by side in one run, and what each
 * explores of the fixed variant in how long; written to results/performance.md and results/performance.svg. In this
 * JVM, per race and engine: one untimed warm-up run, then the timed runs (the step enumerator, Lincheck, a plain stress
 * loop); then the JCStress launches (one per run, as the catalogue launches it: every selected race in one launch);
 * then Fray through its own script ({@code fray-tests/bench}, on JDK 25), when the checkout has it.
 */
final class BenchCommand {
    /** Exit status of {@code fray-tests/bench} when no JDK 25 is found. */
    static final int FRAY_NO_JDK25 = 4;
    static final String FRAY_SCRIPT = "fray-tests/bench";

    private final Path results;
    private final List<Race> races;
    private final int runs;
    private final CatalogueOptions.BenchArgs bounds;
    private final Terminal out = new Terminal();
    final BenchTable table = new BenchTable();
    private final PerformancePage.Meta meta;

    BenchCommand(Path results, List<Race> races, int runs, CatalogueOptions.BenchArgs bounds) {
        this.results = results;
        this.races = races;
        this.runs = runs;
        this.bounds = bounds;
        this.meta = new PerformancePage.Meta(runs, bounds.loopSeconds(), bounds.fixedSeconds());
    }

    static List<Race> reportedRaces(List<Race> races) {
        return races.stream().filter(r -> r.expected(Variant.REPORTED) == Expectation.BUG_FOUND).toList();
    }

    static List<Race> fixedRaces(List<Race> races) {
        return races.stream().filter(r -> r.expected(Variant.FIXED) == Expectation.CLEAN).toList();
    }

    int run() throws IOException, InterruptedException {
        long start = System.nanoTime();
        List<Race> reported = reportedRaces(races);
        List<Race> fixed = fixedRaces(races);
        JcstressRun jcstress = JcstressRun.fromSystemProperties();
        meta.jcstressSettings = String.join(" ", jcstress.settings()) + " (on " + jcstress.java() + ")";
        out.line("Bench: " + reported.size() + " reported and " + fixed.size() + " fixed variant(s); " + runs
                + " timed run(s) per engine after one untimed warm-up; stress loop bound " + bounds.loopSeconds() + " s (fixed "
                + bounds.fixedSeconds() + " s); JCStress " + runs + " launch(es); Fray via " + FRAY_SCRIPT + " if present");
        int n = 0;
        for (Race race : races) {
            n++;
            long raceStart = System.nanoTime();
            if (reported.contains(race)) {
                Subject subject = Subject.of(race, Variant.REPORTED);
                table.put(race, Tool.ENUMERATOR, timed(() -> enumerator(subject)));
                table.put(race, Tool.LINCHECK, timed(() -> lincheck(subject)));
                table.put(race, Tool.LOOP, timed(() -> loop(subject, bounds.loopSeconds() * 1000L)));
            }
            if (fixed.contains(race)) {
                Subject subject = Subject.of(race, Variant.FIXED);
                table.putFixed(race, Tool.ENUMERATOR, enumeratorFixed(subject));
                table.putFixed(race, Tool.LINCHECK, lincheckFixed(subject));
                Run loop = loop(subject, bounds.fixedSeconds() * 1000L);
                table.putFixed(race, Tool.LOOP, new Fixed(loop, loop.status() == BenchTable.Status.NOT_FOUND
                        ? String.format("%,d iterations in %s s, none violated (sampling)", loop.count(), PerformancePage.secs(loop.millis()))
                        : loop.detail(), false));
            }
            out.line(String.format("[%d/%d] %s: %s (%s)", n, races.size(), race.name(), summary(race),
                    Progress.seconds((System.nanoTime() - raceStart) / 1_000_000)));
        }
        meta.inJvmMillis = (System.nanoTime() - start) / 1_000_000;

        long jcstressStart = System.nanoTime();
        jcstress(jcstress, reported, fixed);
        meta.jcstressMillis = (System.nanoTime() - jcstressStart) / 1_000_000;

        long frayStart = System.nanoTime();
        fray(reported, fixed);
        meta.frayMillis = (System.nanoTime() - frayStart) / 1_000_000;

        meta.totalMillis = (System.nanoTime() - start) / 1_000_000;
        meta.loadAtEnd = PerformancePage.loadAverage();
        meta.lastCatalogue = PerformancePage.lastCatalogue(results);
        Files.writeString(results.resolve("performance.md"), new PerformancePage(table, meta).render());
        Files.writeString(results.resolve("performance.svg"), PerformancePlot.svg(table, meta));
        out.blank();
        out.line("Written " + results.resolve("performance.md") + " and performance.svg (" + Progress.clock(meta.totalMillis) + " in all)");
        boolean errors = table.reported.values().stream().flatMap(m -> m.values().stream()).anyMatch(c -> c.firstError() != null)
                || table.fixed.values().stream().flatMap(m -> m.values().stream()).anyMatch(f -> f.run().status() != BenchTable.Status.NOT_FOUND);
        if (errors) {
            out.line("Some run was a modelling error, or a fixed variant violated: see the page (exit 1).");
        }
        return errors ? 1 : 0;
    }

    private String summary(Race race) {
        List<String> parts = new ArrayList<>();
        for (Tool tool : List.of(Tool.ENUMERATOR, Tool.LINCHECK, Tool.LOOP)) {
            Cell c = table.cell(race, tool);
            if (c.ran()) {
                parts.add(tool.label + " " + PerformancePage.time(c, meta));
            }
        }
        return parts.isEmpty() ? "fixed only" : String.join(", ", parts);
    }

    interface Measure {
        Run run() throws InterruptedException;
    }

    /** One untimed warm-up run, then {@link #runs} timed runs. */
    private Cell timed(Measure measure) throws InterruptedException {
        measure.run();
        List<Run> timed = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            timed.add(measure.run());
        }
        return new Cell(timed, null);
    }

    // ---- the step enumerator

    static Run enumerator(Subject subject) {
        long start = System.nanoTime();
        AllInterleavings.FirstViolation first = AllInterleavings.firstViolation(subject::newScenario);
        double millis = (System.nanoTime() - start) / 1e6;
        if (first.error() != null) {
            return Run.error(first.explored(), millis, first.error());
        }
        return first.found() ? Run.found(first.explored(), millis, ((Enum<?>) first.outcome()).name() + " at schedule " + first.schedule())
                : Run.notFound(first.explored(), millis, "none of all " + first.total() + " interleavings violates");
    }

    /** Every point of the race's family, every interleaving of each: counted by the code, so exhaustive when clean. */
    static Fixed enumeratorFixed(Subject subject) {
        long start = System.nanoTime();
        long explored = 0;
        for (Params point : subject.race().grid()) {
            AllInterleavings.FirstViolation all = AllInterleavings.firstViolation(() -> subject.newScenario(point));
            explored += all.explored();
            if (!all.exhaustive()) {
                double millis = (System.nanoTime() - start) / 1e6;
                return new Fixed(all.error() != null ? Run.error(explored, millis, all.error())
                        : Run.found(explored, millis, "VIOLATED at " + point + ": " + ((Enum<?>) all.outcome()).name()), "stopped", false);
            }
        }
        double millis = (System.nanoTime() - start) / 1e6;
        int points = subject.race().grid().size();
        return new Fixed(Run.notFound(explored, millis, "clean"), String.format("all %,d interleavings%s, counted", explored,
                points == 1 ? "" : " over the " + points + " points of its family"), true);
    }

    // ---- Lincheck

    static Run lincheck(Subject subject) {
        LincheckVerdicts.Checked checked = LincheckVerdicts.check(subject);
        Verdict verdict = checked.verdict();
        long millis = checked.result().wallMillis();
        if (verdict.observed() == Observed.HARNESS_ERROR) {
            return Run.error(checked.result().invocations(), millis, verdict.detail());
        }
        if (verdict.observed() == Observed.BUG_FOUND) {
            for (RunRecorder.Run run : checked.result().runs()) {
                RaceOutcome outcome = outcomeOrNull(subject.race(), run.outcome());
                if (outcome != null && outcome.violation()) {
                    return Run.found(run.invocation(), millis, run.outcome());
                }
            }
        }
        return Run.notFound(checked.result().invocations(), millis, verdict.figures());
    }

    private static Fixed lincheckFixed(Subject subject) {
        lincheck(subject); // the warm-up of this variant
        LincheckVerdicts.Checked checked = LincheckVerdicts.check(subject);
        Run run = checked.verdict().observed() == Observed.HARNESS_ERROR
                ? Run.error(checked.result().invocations(), checked.result().wallMillis(), checked.verdict().detail())
                : checked.verdict().observed() == Observed.BUG_FOUND
                ? Run.found(checked.result().invocations(), checked.result().wallMillis(), "VIOLATED: " + checked.verdict().figures())
                : Run.notFound(checked.result().invocations(), checked.result().wallMillis(), checked.verdict().figures());
        return new Fixed(run, checked.result().figures() + "; a bounded model check under sequential consistency", false);
    }

    private static RaceOutcome outcomeOrNull(Race race, String name) {
        try {
            return race.outcome(name);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    // ---- the plain stress loop

    /**
     * What a user without a tool writes: per iteration a fresh scenario, two fresh threads running actor 1 and actor 2,
     * both joined, then the judge; until the first violating outcome or {@code limitMillis}. A modelling-error outcome,
     * an arbiter that throws or an actor thread that dies is an error, never a find.
     */
    static Run loop(Subject subject, long limitMillis) throws InterruptedException {
        long start = System.nanoTime();
        long iterations = 0;
        while (true) {
            double elapsed = (System.nanoTime() - start) / 1e6;
            if (elapsed >= limitMillis) {
                return Run.notFound(iterations, elapsed, String.format("not found in %,d iterations", iterations));
            }
            iterations++;
            RaceScenario scenario = subject.newScenario();
            AtomicReference<Throwable> died = new AtomicReference<>();
            Thread a = new Thread(() -> scenario.actor1().run(), "actor1");
            Thread b = new Thread(() -> scenario.actor2().run(), "actor2");
            for (Thread t : List.of(a, b)) {
                t.setDaemon(true);
                t.setUncaughtExceptionHandler((thread, e) -> died.compareAndSet(null, e));
            }
            a.start();
            b.start();
            a.join(limitMillis + 10_000);
            b.join(limitMillis + 10_000);
            double millis = (System.nanoTime() - start) / 1e6;
            if (a.isAlive() || b.isAlive()) {
                return Run.error(iterations, millis, "an actor thread still ran " + (limitMillis / 1000 + 10) + " s later");
            }
            if (died.get() != null) {
                return Run.error(iterations, millis, "an actor thread died: " + died.get());
            }
            RaceOutcome outcome;
            try {
                outcome = scenario.judge();
            } catch (RuntimeException e) {
                return Run.error(iterations, millis, "the arbiter threw " + e);
            }
            if (outcome.modellingError()) {
                RuntimeException failure = scenario.unexpectedActorFailure();
                return Run.error(iterations, millis, ((Enum<?>) outcome).name() + " (a modelling error)"
                        + (failure == null ? "; detectors " + scenario.violations() : "; an actor raised " + failure));
            }
            if (outcome.violation()) {
                return Run.found(iterations, millis, ((Enum<?>) outcome).name());
            }
        }
    }

    // ---- JCStress

    /**
     * {@link #runs} launches, as the catalogue launches JCStress (every selected race in one launch, no relaunch): the
     * first with every JCStress variant (so the fixed variants' samples), the others with the reported variants only.
     * JCStress reports a test only when its fork ends and does not time the first violating sample, so the time given
     * is each test's share of its launch (the launch's wall time over its tests).
     */
    private void jcstress(JcstressRun jcstress, List<Race> reported, List<Race> fixed) throws IOException, InterruptedException {
        List<List<Run>> byRace = new ArrayList<>();
        reported.forEach(r -> byRace.add(new ArrayList<>()));
        for (int launch = 1; launch <= runs; launch++) {
            List<String> tests = new ArrayList<>();
            reported.forEach(r -> tests.add(JcstressNames.testName(r, Variant.REPORTED)));
            if (launch == 1) {
                fixed.forEach(r -> tests.add(JcstressNames.testName(r, Variant.FIXED)));
            }
            if (tests.isEmpty()) {
                return;
            }
            String regex = String.join("|", tests.stream().map(t -> t.replace(".", "\\.") + "$").toList());
            out.line("JCStress launch " + launch + "/" + runs + ": " + tests.size() + " test(s) in one launch ("
                    + meta.jcstressSettings + ") ...");
            JcstressResults stress;
            try (JcstressProgress.Watcher watcher = new JcstressProgress.Watcher(jcstress.workDir(), Catalogue.PROGRESS_MILLIS, out::detail)) {
                stress = jcstress.run(regex, "bench");
            }
            double share = (double) stress.wallMillis() / tests.size();
            meta.jcstressLaunches.add(String.format("launch %d: %d tests, %s", launch, tests.size(), Progress.clock(stress.wallMillis())));
            out.detail(String.format("done in %s (%.1f s per test)", Progress.clock(stress.wallMillis()), share / 1000));
            for (int i = 0; i < reported.size(); i++) {
                byRace.get(i).add(jcstressRun(JcstressVerdicts.verdict(reported.get(i), Variant.REPORTED, stress), share));
            }
            if (launch == 1) {
                for (Race race : fixed) {
                    Run run = jcstressRun(JcstressVerdicts.verdict(race, Variant.FIXED, stress), share);
                    table.putFixed(race, Tool.JCSTRESS, new Fixed(run, String.format("%,d samples, %d violating (sampling; "
                            + "%.1f s: its share of the launch)", run.count(), run.violating(), share / 1000), false));
                }
            }
        }
        for (int i = 0; i < reported.size(); i++) {
            table.put(reported.get(i), Tool.JCSTRESS, new Cell(byRace.get(i), null));
        }
    }

    private static Run jcstressRun(Verdict verdict, double share) {
        return switch (verdict.observed()) {
            case BUG_FOUND -> new Run(BenchTable.Status.FOUND, verdict.runs(), verdict.violatingRuns(), share, verdict.figures());
            case CLEAN, INCOMPLETE -> new Run(BenchTable.Status.NOT_FOUND, verdict.runs(), 0, share, verdict.figures());
            default -> Run.error(verdict.runs(), share, verdict.observed().label() + ": " + verdict.figures() + "; " + verdict.detail());
        };
    }

    // ---- Fray, through the other module's script

    /**
     * Two calls of the script: the reported variants with {@link #runs} runs, then the fixed ones with one run (a fixed
     * variant explores Fray's whole budget each run, seconds per race and scheduler, and the page shows one run of it).
     */
    private void fray(List<Race> reported, List<Race> fixed) throws IOException, InterruptedException {
        Path root = results.getParent();
        Path script = root.resolve(FRAY_SCRIPT);
        if (!Files.isExecutable(script)) {
            frayNotRun(FRAY_SCRIPT + " is not on this checkout");
            return;
        }
        preloadSuiteJars();
        List<FrayTsv.Row> rows = new ArrayList<>();
        for (boolean isFixed : new boolean[] {false, true}) {
            List<Race> selected = isFixed ? fixed : reported;
            if (selected.isEmpty()) {
                continue;
            }
            List<FrayTsv.Row> some = frayCall(root, script, isFixed ? "fixed" : "reported", isFixed ? 1 : runs, selected);
            if (some == null) {
                return;
            }
            rows.addAll(some);
        }
        meta.frayRan = true;
        putFray(table, rows);
    }

    /** One call of the script; null when it gave no table (the page then says why, through {@link #frayNotRun}). */
    private List<FrayTsv.Row> frayCall(Path root, Path script, String variant, int n, List<Race> selected)
            throws IOException, InterruptedException {
        Path work = results.resolve("target");
        Files.createDirectories(work);
        Path tsv = work.resolve("fray-bench-" + variant + ".tsv");
        Path log = work.resolve("fray-bench-" + variant + ".log");
        Files.deleteIfExists(tsv);
        List<String> command = new ArrayList<>(List.of(script.toString(), "--out", tsv.toString(), "--runs", String.valueOf(n),
                "--variant", variant));
        selected.forEach(r -> command.add(r.name()));
        out.line("Fray: " + String.join(" ", command.subList(0, 7)) + " (" + selected.size() + " race(s)) ...");
        Process process = new ProcessBuilder(command).directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!process.waitFor(60, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            frayNotRun("its script did not finish within 60 minutes (log " + root.relativize(log) + ")");
            return null;
        }
        String last = Files.readAllLines(log).stream().filter(l -> !l.isBlank()).reduce((x, y) -> y).orElse("");
        String refused = frayRefusal(process.exitValue(), last);
        if (refused != null) {
            frayNotRun(refused);
            return null;
        }
        try {
            return FrayTsv.parse(Files.exists(tsv) ? Files.readAllLines(tsv) : List.of());
        } catch (FrayTsv.FormatException e) {
            frayNotRun("its table " + root.relativize(tsv) + " is malformed: " + e.getMessage());
            return null;
        }
    }

    /**
     * The Fray script builds its module with Maven ({@code -pl fray-tests -am package}), which can rewrite the suite's
     * module jars under this JVM; a class first needed after that then fails to load (seen: NoClassDefFoundError for a
     * model class in Race.valueOf). So every suite class in a module jar of this JVM's class path is loaded (not
     * initialised) before the script runs.
     */
    static int preloadSuiteJars() {
        int loaded = 0;
        ClassLoader loader = BenchCommand.class.getClassLoader();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (!entry.endsWith(".jar") || !entry.contains("/target/")) {
                continue;
            }
            try (java.util.jar.JarFile jar = new java.util.jar.JarFile(entry)) {
                for (java.util.jar.JarEntry e : java.util.Collections.list(jar.entries())) {
                    String name = e.getName();
                    if (name.startsWith("vllmrace/") && name.endsWith(".class") && !name.contains("module-info")) {
                        try {
                            Class.forName(name.substring(0, name.length() - 6).replace('/', '.'), false, loader);
                            loaded++;
                        } catch (ClassNotFoundException | LinkageError ignored) {
                            // a class this JVM cannot load anyway
                        }
                    }
                }
            } catch (IOException e) {
                // not a readable jar: nothing to preload
            }
        }
        return loaded;
    }

    /**
     * Why the Fray script's exit status means there is no table to read, or null when there is one: 0, or 1 (an
     * exploration was a harness error; its row says {@code MODEL_ERROR:...} and is read as an error, never a find).
     * 4 is no JDK 25; 2 bad input; 3 its build failed.
     */
    static String frayRefusal(int exit, String lastLine) {
        String said = lastLine == null || lastLine.isBlank() ? "" : ": " + lastLine.strip();
        return switch (exit) {
            case 0, 1 -> null;
            case FRAY_NO_JDK25 -> "no JDK 25 (" + FRAY_SCRIPT + " exited 4" + said + ")";
            case 3 -> "its build failed (" + FRAY_SCRIPT + " exited 3" + said + ")";
            default -> FRAY_SCRIPT + " exited " + exit + said;
        };
    }

    /** The Fray rows into the table: per race and scheduler, the reported runs as a cell and the first fixed run. */
    static void putFray(BenchTable table, List<FrayTsv.Row> rows) {
        for (Map.Entry<String, Tool> scheduler : Map.of("POS", Tool.FRAY_POS, "PCT", Tool.FRAY_PCT).entrySet()) {
            java.util.Map<Race, List<Run>> reportedRuns = new java.util.LinkedHashMap<>();
            for (FrayTsv.Row row : rows) {
                if (!row.scheduler().equals(scheduler.getKey())) {
                    continue;
                }
                Run run = row.error() ? Run.error(row.iterations(), row.millis(), row.outcome())
                        : row.foundRace() ? Run.found(row.iterations(), row.millis(), row.outcome())
                        : Run.notFound(row.iterations(), row.millis(), row.outcome());
                if (row.variant() == Variant.REPORTED) {
                    reportedRuns.computeIfAbsent(row.race(), r -> new ArrayList<>()).add(run);
                } else if (table.fixed.getOrDefault(row.race(), Map.of()).get(scheduler.getValue()) == null) {
                    table.putFixed(row.race(), scheduler.getValue(), new Fixed(run, String.format("%,d iterations, %s (sampling: "
                            + "randomized schedules)", row.iterations(), row.outcome()), false));
                }
            }
            reportedRuns.forEach((race, runs) -> table.put(race, scheduler.getValue(), new Cell(runs, null)));
        }
    }

    private void frayNotRun(String reason) {
        out.line("Fray: not run (" + reason + ")");
        table.notRun.put(Tool.FRAY_POS, reason);
        table.notRun.put(Tool.FRAY_PCT, reason);
    }
}
