package vllmrace.lincheck.verdict;

import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
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
        Subject subject = Subject.of(race, variant);
        return check(subject, LincheckRun.budgetFor(AllInterleavings.distinctStepSequences(subject::newScenario)));
    }

    public static Checked check(Subject subject, int budget) {
        LincheckResult result = LincheckRun.checkScenario(subject, budget);
        Race race = subject.race();
        Optional<RunRecorder.Run> error = first(race, result, outcome -> outcome == null || outcome.modellingError());
        if (error.isPresent()) {
            RunRecorder.Run run = error.get();
            return harnessError(subject, result.withSteps(run.steps(), run.violations()), "invocation " + run.invocation()
                    + " ended " + run.outcome() + (run.actorFailure() == null ? "" : "; an actor raised " + run.actorFailure())
                    + "; detectors " + run.violations());
        }
        Optional<RunRecorder.Run> violating = first(race, result, outcome -> outcome != null && outcome.violation());
        if (result.failed() && violating.isEmpty()) {
            return harnessError(subject, result, "Lincheck failed on no violating invocation:\n" + result.report());
        }
        if (violating.isPresent()) {
            RunRecorder.Run run = violating.get();
            LincheckResult withTrace = result.withSteps(run.steps(), run.violations());
            long count = count(race, result, outcome -> outcome != null && outcome.violation());
            return new Checked(new Verdict(race, Engine.LINCHECK, subject.variant(), Observed.BUG_FOUND, result.invocations(),
                    count, "invocation " + run.invocation() + " of " + result.invocations() + " violated; "
                    + (result.failed() ? "Lincheck failed there" : "Lincheck passed it: a sequential order gives it too"),
                    result.report()), withTrace);
        }
        if (result.invocations() == 0) {
            return new Checked(new Verdict(race, Engine.LINCHECK, subject.variant(), Observed.NO_RESULTS, 0, 0,
                    "no invocation ran", subject.label()), result);
        }
        boolean small = result.coverage().known() && result.coverage().total() <= SMALL_SCENARIO;
        Observed observed = small && !result.coverage().complete() ? Observed.INCOMPLETE : Observed.CLEAN;
        return new Checked(new Verdict(race, Engine.LINCHECK, subject.variant(), observed, result.invocations(), 0,
                result.figures(), String.valueOf(result.outcomes())), result);
    }

    private static Checked harnessError(Subject subject, LincheckResult result, String detail) {
        return new Checked(new Verdict(subject.race(), Engine.LINCHECK, subject.variant(), Observed.HARNESS_ERROR,
                result.invocations(), 0, "harness error in " + result.invocations() + " invocation(s)",
                subject.label() + ": " + detail), result);
    }

    /** The earliest recorded invocation whose outcome (null: not an outcome of the race) passes {@code test}. */
    private static Optional<RunRecorder.Run> first(Race race, LincheckResult result, java.util.function.Predicate<RaceOutcome> test) {
        return result.firstByOutcome().entrySet().stream()
                .filter(e -> test.test(outcomeOrNull(race, e.getKey())))
                .map(Map.Entry::getValue)
                .min(Comparator.comparingLong(RunRecorder.Run::invocation));
    }

    private static long count(Race race, LincheckResult result, java.util.function.Predicate<RaceOutcome> test) {
        return result.outcomes().entrySet().stream().filter(e -> test.test(outcomeOrNull(race, e.getKey())))
                .mapToLong(Map.Entry::getValue).sum();
    }

    private static RaceOutcome outcomeOrNull(Race race, String name) {
        try {
            return race.outcome(name);
        } catch (IllegalArgumentException e) {
            return null; // ARBITER_THREW: ...
        }
    }
}
