package vllmrace.stress.verdict;

import vllmrace.races.derive.JcstressNames;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Expectation;
import vllmrace.races.Observed;
import vllmrace.races.OutcomeKind;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;

/**
 * Turns JCStress results into verdicts: the one verdict path of this engine, called by the tests and the catalogue.
 * An outcome counts as the race when the race's own outcome enum says {@link RaceOutcome#violation()}: the model's
 * classification, not JCStress's grading, decides (the generated tests' ACCEPTABLE_INTERESTING / FORBIDDEN are for
 * people reading JCStress's report). A single sample that ends in the modelling-error outcome makes the verdict a
 * harness error, as does a JCStress TEST_ERROR / VM_ERROR / TIMEOUT.
 */
public final class JcstressVerdicts {
    /** Every JCStress test of the suite. */
    public static final String ALL_TESTS = "vllmrace\\.stress\\..*";

    private JcstressVerdicts() {
    }

    /** The regex selecting the JCStress tests of these races (every JCStress variant), and of these extra tests. */
    public static String regexFor(List<Race> races, List<String> extraTests) {
        List<String> names = new ArrayList<>();
        for (Race race : races) {
            names.add((JcstressNames.className(race) + ".").replace(".", "\\.") + ".*");
        }
        for (String test : extraTests) {
            names.add(test.replace(".", "\\.") + "$");
        }
        return String.join("|", names);
    }

    /** The JCStress variants of a race: those of {@link Engine#JCSTRESS} the catalogue expects something of. */
    public static List<Variant> variants(Race race) {
        return Cells.variants(Engine.JCSTRESS, race);
    }

    /** Launches after the first for a reported variant that showed no violating sample yet, or a clean one below its floor. */
    public static final int EXTRA_LAUNCHES = 2;

    /** The chance a clean verdict must have had to see the race, at the rate its reported variant showed in the same run. */
    public static final double CONFIDENCE = 0.99;

    /**
     * The least number of samples behind any clean verdict: in 1,000 samples an outcome of rate 0.46 % or more shows at
     * least once with 99 % probability ({@code ln(100) / 1000}). A race whose reported variant shows a lower rate in the
     * same run needs more ({@link #cleanFloor}).
     */
    public static final long MIN_CLEAN_SAMPLES = 1_000;

    /**
     * How many samples a clean verdict of {@code race} needs: enough that its reported variant's violating rate in these
     * results (p) would have shown at least once with {@link #CONFIDENCE} ({@code ceil(ln(1 / (1 - 0.99)) / p)}), and never
     * fewer than {@link #MIN_CLEAN_SAMPLES}; the minimum alone when the reported variant did not run or showed nothing.
     */
    public static long cleanFloor(Race race, JcstressResults results) {
        JcstressTestResult reported = variants(race).contains(Variant.REPORTED)
                ? results.get(JcstressNames.testName(race, Variant.REPORTED)) : null;
        if (reported == null || reported.totalSamples() == 0) {
            return MIN_CLEAN_SAMPLES;
        }
        long violating = samplesOf(race, reported, OutcomeKind.VIOLATING);
        if (violating == 0) {
            return MIN_CLEAN_SAMPLES;
        }
        double rate = (double) violating / reported.totalSamples();
        return Math.max(MIN_CLEAN_SAMPLES, (long) Math.ceil(Math.log(1 / (1 - CONFIDENCE)) / rate));
    }

    /**
     * Runs the JCStress tests of {@code races} in one launch; then, since a race that shows in 0.01% of
     * samples can miss one short run, re-runs up to {@link #EXTRA_LAUNCHES} times the reported variants that
     * have not shown their race yet, and the variants whose clean run is below its {@link #cleanFloor} (a slow or
     * loaded machine). Counts add up across launches, and the figures say how many there were; a variant still below
     * its floor after them is {@link Observed#INCOMPLETE}, which fails the build, never clean.
     */
    public static JcstressResults runUntilObserved(JcstressRun run, List<Race> races) throws IOException, InterruptedException {
        return runUntilObserved(run, races, List.of());
    }

    /** As {@link #runUntilObserved(JcstressRun, List)}, with {@code extraTests} (the harness self-test) in the first launch. */
    public static JcstressResults runUntilObserved(JcstressRun run, List<Race> races, List<String> extraTests)
            throws IOException, InterruptedException {
        JcstressResults results = run.run(regexFor(races, extraTests));
        for (int launch = 1; launch <= EXTRA_LAUNCHES; launch++) {
            List<String> missing = new ArrayList<>();
            for (Race race : races) {
                java.util.Set<Variant> again = new java.util.LinkedHashSet<>();
                for (Variant variant : variants(race)) {
                    Observed observed = verdict(race, variant, results).observed();
                    if (variant == Variant.REPORTED && race.expected(Variant.REPORTED) == Expectation.BUG_FOUND
                            && observed != Observed.BUG_FOUND && observed != Observed.HARNESS_ERROR) {
                        again.add(variant); // the race not shown yet
                    } else if (observed == Observed.INCOMPLETE) {
                        again.add(variant); // below its floor: more samples, and the reported rate measured again beside them
                        if (variant != Variant.REPORTED && variants(race).contains(Variant.REPORTED)) {
                            again.add(Variant.REPORTED);
                        }
                    }
                }
                again.forEach(v -> missing.add(JcstressNames.testName(race, v).replace(".", "\\.") + "$"));
            }
            if (missing.isEmpty()) {
                break;
            }
            results = results.plus(run.run(String.join("|", missing), "report-relaunch-" + launch));
        }
        return results;
    }

    public static Verdict verdict(Race race, Variant variant, JcstressResults results) {
        return verdict(race, variant, JcstressNames.testName(race, variant), results);
    }

    /** The verdict of JCStress test {@code test}, which runs {@code race}'s scenario (or a self-test of it). */
    public static Verdict verdict(Race race, Variant variant, String test, JcstressResults results) {
        JcstressTestResult result = results.get(test);
        if (result == null || result.totalSamples() == 0) {
            return new Verdict(Subject.of(race, variant), Engine.JCSTRESS, Observed.NO_RESULTS, 0, 0, "no results",
                    "JCStress produced no results for " + test + " (exit code " + results.exitCode() + ", console "
                            + results.console() + ")");
        }
        if (result.harnessError()) {
            return new Verdict(Subject.of(race, variant), Engine.JCSTRESS, Observed.HARNESS_ERROR, result.totalSamples(), 0,
                    "status " + result.statuses(), String.join("\n", result.messages()));
        }
        long violating = samplesOf(race, result, OutcomeKind.VIOLATING);
        long modellingErrors = samplesOf(race, result, OutcomeKind.MODELLING_ERROR);
        StringBuilder detail = new StringBuilder();
        result.counts().forEach((state, n) -> detail.append(detail.length() == 0 ? "" : ", ").append(state).append('=').append(n));
        if (modellingErrors > 0) {
            return new Verdict(Subject.of(race, variant), Engine.JCSTRESS, Observed.HARNESS_ERROR, result.totalSamples(), violating,
                    String.format("%,d of %,d samples ended in a modelling error", modellingErrors, result.totalSamples()),
                    test + ": " + detail + " (" + race.modellingError() + ": " + race.modellingError().meaning() + ")");
        }
        long floor = cleanFloor(race, results);
        boolean belowFloor = violating == 0 && result.totalSamples() < floor;
        Observed observed = violating > 0 ? Observed.BUG_FOUND : belowFloor ? Observed.INCOMPLETE : Observed.CLEAN;
        String figures = String.format("%,d samples, %,d violating", result.totalSamples(), violating)
                + (result.launches() > 1 ? " (" + result.launches() + " launches)" : "")
                + (violating == 0 ? String.format("; floor %,d%s", floor, belowFloor ? ": too few to say clean" : "") : "");
        return new Verdict(Subject.of(race, variant), Engine.JCSTRESS, observed, result.totalSamples(), violating, figures, detail.toString());
    }

    /** How many of a test's samples ended in an outcome of {@code kind}, by the race's own outcome enum. */
    private static long samplesOf(Race race, JcstressTestResult result, OutcomeKind kind) {
        return result.counts().entrySet().stream().filter(e -> race.outcome(e.getKey()).kind() == kind)
                .mapToLong(Map.Entry::getValue).sum();
    }
}
