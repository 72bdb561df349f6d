package vllmrace.fray;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import vllmrace.races.Expectation;
import vllmrace.races.Race;
import vllmrace.races.Subject;
import vllmrace.races.Variant;

/**
 * The Fray engine's bench ({@code fray-tests/bench} runs it in the JVM Fray prepared): every race and variant asked for,
 * under POS and PCT, {@code runs} explorations each, one TSV row per exploration.
 *
 * <p>Usage: {@code FrayBench --out FILE [--runs N] [--budget N] [--variant reported|fixed|both] [RACE...]}; no races =
 * every race whose reported variant must find the bug ({@link Expectation#BUG_FOUND}). Run {@code r} (1..N) draws its
 * schedules from seed {@code r}, so runs differ by seed only and a rerun repeats them. One untimed warm-up exploration
 * (the first race and variant asked for, POS, seed 0) runs first. Exit 2 with one line on bad input; exit 1 when an
 * exploration was a harness error (its row says MODEL_ERROR:...), after every row is written.
 */
public final class FrayBench {
    /** The TSV's header. */
    public static final String HEADER = "race\tvariant\tscheduler\trun\titerations\tmillis\tfound\toutcome";

    record Options(Path out, int runs, int budget, List<Variant> variants, List<Race> races) {
    }

    /** Bad input: one line on stderr, exit 2. */
    static final class Usage extends Exception {
        Usage(String message) {
            super(message);
        }
    }

    private FrayBench() {
    }

    public static void main(String[] args) {
        Options options;
        try {
            options = parse(args);
        } catch (Usage e) {
            System.err.println("fray: " + e.getMessage());
            exit(2);
            return;
        }
        try {
            exit(run(options));
        } catch (IOException e) {
            System.err.println("fray: cannot write " + options.out() + ": " + e.getMessage());
            exit(2);
        }
    }

    /** Under Fray's agent System.exit's status is lost (the JVM exits 0): halt, after flushing, keeps it. */
    private static void exit(int status) {
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(status);
    }

    /** The races whose reported variant must find the bug, in the registry's order. */
    public static List<Race> catalogued() {
        return Arrays.stream(Race.values()).filter(r -> r.expected(Variant.REPORTED) == Expectation.BUG_FOUND).toList();
    }

    static Options parse(String[] args) throws Usage {
        Path out = null;
        int runs = 5;
        int budget = 1000;
        List<Variant> variants = List.of(Variant.REPORTED, Variant.FIXED);
        List<Race> races = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--out" -> out = Path.of(value(args, ++i, arg));
                case "--runs" -> runs = positive(value(args, ++i, arg), arg);
                case "--budget" -> budget = positive(value(args, ++i, arg), arg);
                case "--variant" -> variants = switch (value(args, ++i, arg)) {
                    case "reported" -> List.of(Variant.REPORTED);
                    case "fixed" -> List.of(Variant.FIXED);
                    case "both" -> List.of(Variant.REPORTED, Variant.FIXED);
                    default -> throw new Usage("--variant takes reported, fixed or both, not " + args[i]);
                };
                default -> {
                    if (arg.startsWith("-")) {
                        throw new Usage("unknown flag " + arg);
                    }
                    Race race = Arrays.stream(Race.values()).filter(r -> r.name().equals(arg)).findFirst()
                            .orElseThrow(() -> new Usage("unknown race " + arg));
                    races.add(race);
                }
            }
        }
        if (out == null) {
            throw new Usage("--out FILE is required");
        }
        for (Race race : races) { // a positive control (ExtraAsyncSavesDedup) has only a fixed variant to explore
            if (variants.contains(Variant.REPORTED) && race.expected(Variant.REPORTED) != Expectation.BUG_FOUND) {
                throw new Usage(race + " has no reported variant that must find the bug (--variant fixed explores its fixed one)");
            }
        }
        return new Options(out, runs, budget, variants, races.isEmpty() ? catalogued() : races);
    }

    private static String value(String[] args, int i, String flag) throws Usage {
        if (i >= args.length) {
            throw new Usage(flag + " needs a value");
        }
        return args[i];
    }

    private static int positive(String text, String flag) throws Usage {
        try {
            int n = Integer.parseInt(text);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw new Usage(flag + " takes a positive integer, not " + text);
    }

    static int run(Options o) throws IOException {
        Path parent = o.out().toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Subject first = Subject.of(o.races().get(0), o.variants().get(0));
        long warm = System.nanoTime();
        FrayExploration.Result warmUp = FrayExploration.explore(first, FrayExploration.SchedulerKind.POS, o.budget(), 0);
        System.err.printf(Locale.ROOT, "fray: warm-up (untimed) %s POS: %d iterations, %d ms wall%n", first.label(),
                warmUp.iterations(), (System.nanoTime() - warm) / 1_000_000);
        int errors = 0;
        int rows = 0;
        try (PrintWriter tsv = new PrintWriter(Files.newBufferedWriter(o.out(), StandardCharsets.UTF_8))) {
            tsv.println(HEADER);
            tsv.flush();
            for (Race race : o.races()) {
                for (Variant variant : o.variants()) {
                    Subject subject = Subject.of(race, variant);
                    for (FrayExploration.SchedulerKind scheduler : FrayExploration.SchedulerKind.values()) {
                        for (int run = 1; run <= o.runs(); run++) {
                            FrayExploration.Result r = FrayExploration.explore(subject, scheduler, o.budget(), run);
                            String row = String.join("\t", race.name(), variant.label(), scheduler.name(), String.valueOf(run),
                                    String.valueOf(r.iterations()), String.valueOf(r.millis()), String.valueOf(r.found()),
                                    r.outcome());
                            tsv.println(row);
                            tsv.flush();
                            rows++;
                            System.err.println("fray: " + row);
                            if (r.kind() == FrayExploration.Kind.MODEL_ERROR) {
                                errors++;
                            }
                        }
                    }
                }
            }
        }
        System.err.printf(Locale.ROOT, "fray: %d rows written to %s, %d harness errors%n", rows, o.out(), errors);
        return errors == 0 ? 0 : 1;
    }
}
