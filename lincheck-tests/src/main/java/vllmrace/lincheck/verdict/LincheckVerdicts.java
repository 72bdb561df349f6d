package vllmrace.lincheck.verdict;

import java.util.ArrayList;
import java.util.List;
import vllmrace.races.AllInterleavings;
import vllmrace.races.Engine;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;

/**
 * Lincheck's verdicts on a race's scenario: the one verdict path of this engine, called by the tests and the catalogue.
 * Read from every invocation's judged outcome, not only from Lincheck's pass or fail:
 * <ul>
 *   <li>harness error: an invocation ended in the modelling-error outcome or its arbiter threw, or Lincheck failed on
 *       an invocation that did not violate (the counterexample would be meaningless);</li>
 *   <li>bug found: some invocation violated (its steps are the counterexample);</li>
 *   <li>incomplete: none violated, but a small scenario (at most {@link #SMALL_SCENARIO} step interleavings) did not
 *       have every one of them among the invocations;</li>
 *   <li>clean: otherwise, with invocations run; Lincheck's check is bounded, so "clean" is about the invocations
 *       explored.</li>
 * </ul>
 */
public final class LincheckVerdicts {
    /** Scenarios with at most this many step interleavings must have all of them among a clean run's invocations. */
    public static final int SMALL_SCENARIO = 20;

    private LincheckVerdicts() {
    }

    /** A checked subject: the verdict, and the Lincheck result behind it (with the counterexample, if any). */
    public record Checked(Verdict verdict, LincheckResult result) {
    }

    /** Checks a race's variant with the budget its scenario's size calls for ({@link LincheckRun#budgetFor}). */
    public static Checked check(Race race, Variant variant) {
        return check(Subject.of(race, variant));
    }

    /** Checks a subject with the budget its scenario's size calls for ({@link LincheckRun#budgetFor}). */
    public static Checked check(Subject subject) {
        return check(subject, LincheckRun.budgetFor(AllInterleavings.distinctStepSequences(subject::newScenario)));
    }

    public static Checked check(Subject subject, int budget) {
        LincheckResult result = LincheckRun.checkScenario(subject, budget);
        Race race = subject.race();
        List<RunRecorder.Run> errors = new ArrayList<>();
        List<RunRecorder.Run> violating = new ArrayList<>();
        List<RunRecorder.Run> tolerated = new ArrayList<>();
        for (RunRecorder.Run run : result.runs()) {
            RaceOutcome outcome = outcomeOrNull(race, run.outcome());
            if (outcome == null || outcome.modellingError()) {
                errors.add(run);
            } else if (outcome.violation()) {
                boolean leftAlone = !subject.tolerated().isEmpty() && !run.invariants().isEmpty()
                        && subject.tolerated().containsAll(run.invariants());
                (leftAlone ? tolerated : violating).add(run);
            }
        }
        if (!errors.isEmpty()) {
            RunRecorder.Run run = errors.get(0);
            return harnessError(subject, result.withSteps(run.steps(), run.violations()), "invocation " + run.invocation()
                    + " ended " + run.outcome() + (run.actorFailure() == null ? "" : "; an actor raised " + run.actorFailure())
                    + "; detectors " + run.violations());
        }
        if (result.failed() && violating.isEmpty() && tolerated.isEmpty()) {
            return harnessError(subject, result, "Lincheck failed on no violating invocation:\n" + result.report());
        }
        String leftAlone = tolerated.isEmpty() ? "" : "; " + tolerated.size() + " invocation(s) break only " + subject.tolerated()
                + ", which the registry says " + subject.only() + " alone leaves";
        if (!violating.isEmpty()) {
            RunRecorder.Run run = violating.get(0);
            LincheckResult withTrace = result.withSteps(run.steps(), run.violations());
            return new Checked(new Verdict(subject, Engine.LINCHECK, Observed.BUG_FOUND, result.invocations(), violating.size(),
                    "invocation " + run.invocation() + " of " + result.invocations() + " violated; "
                            + (result.failed() ? "Lincheck failed there"
                            // the stopping invocation is the last, or the one before Lincheck's replay of it
                            : race.window() != vllmrace.races.Window.INTERLEAVING && result.invocations() - run.invocation() <= 1
                            ? "the suite stopped there: a sequential order gives it too, so Lincheck would not fail it"
                            : "Lincheck passed it: a sequential order gives it too") + leftAlone,
                    result.report()), withTrace);
        }
        if (result.invocations() == 0) {
            return new Checked(new Verdict(subject, Engine.LINCHECK, Observed.NO_RESULTS, 0, 0, "no invocation ran", subject.label()), result);
        }
        boolean small = result.coverage().known() && result.coverage().total() <= SMALL_SCENARIO;
        Observed observed = small && !result.coverage().complete() ? Observed.INCOMPLETE : Observed.CLEAN;
        return new Checked(new Verdict(subject, Engine.LINCHECK, observed, result.invocations(), 0, result.figures() + leftAlone,
                String.valueOf(result.outcomes())), result);
    }

    private static Checked harnessError(Subject subject, LincheckResult result, String detail) {
        return new Checked(new Verdict(subject, Engine.LINCHECK, Observed.HARNESS_ERROR,
                result.invocations(), 0, "harness error in " + result.invocations() + " invocation(s)",
                subject.label() + ": " + detail), result);
    }

    private static RaceOutcome outcomeOrNull(Race race, String name) {
        try {
            return race.outcome(name);
        } catch (IllegalArgumentException e) {
            return null; // ARBITER_THREW: ...
        }
    }
}
