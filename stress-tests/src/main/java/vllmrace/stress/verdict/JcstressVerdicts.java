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

    /** Launches after the first for a reported variant that showed no violating sample yet. */
    public static final int EXTRA_LAUNCHES = 2;

    /**
     * Runs the JCStress tests of {@code races} in one launch; then, since a race that shows in 0.01% of
     * samples can miss one short run, re-runs up to {@link #EXTRA_LAUNCHES} times the reported variants that
     * have not shown their race yet. Counts add up across launches, and the figures say how many there were;
     * a fixed variant is never re-run, so its clean verdict rests on its one launch.
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
                if (race.expected(Variant.REPORTED) == Expectation.BUG_FOUND
                        && verdict(race, Variant.REPORTED, results).observed() == Observed.CLEAN) {
                    missing.add(JcstressNames.testName(race, Variant.REPORTED).replace(".", "\\.") + "$");
                }
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
        long violating = 0;
        long modellingErrors = 0;
        StringBuilder detail = new StringBuilder();
        for (Map.Entry<String, Long> state : result.counts().entrySet()) {
            RaceOutcome outcome = race.outcome(state.getKey());
            if (outcome.violation()) {
                violating += state.getValue();
            } else if (outcome.modellingError()) {
                modellingErrors += state.getValue();
            }
            detail.append(detail.length() == 0 ? "" : ", ").append(state.getKey()).append('=').append(state.getValue());
        }
        if (modellingErrors > 0) {
            return new Verdict(Subject.of(race, variant), Engine.JCSTRESS, Observed.HARNESS_ERROR, result.totalSamples(), violating,
                    String.format("%,d of %,d samples ended in a modelling error", modellingErrors, result.totalSamples()),
                    test + ": " + detail + " (" + race.modellingError() + ": " + race.modellingError().meaning() + ")");
        }
        Observed observed = violating > 0 ? Observed.BUG_FOUND : Observed.CLEAN;
        String figures = String.format("%,d samples, %,d violating", result.totalSamples(), violating)
                + (result.launches() > 1 ? " (" + result.launches() + " launches)" : "");
        return new Verdict(Subject.of(race, variant), Engine.JCSTRESS, observed, result.totalSamples(), violating, figures, detail.toString());
    }
}
