package vllmrace.races;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The step enumerator's verdicts: every schedule of a subject's two actors ({@link AllInterleavings}), judged. The one
 * verdict path of this engine, called by the tests and the catalogue alike.
 *
 * <p>A harness error, naming the schedule: a schedule that ends in the scenario's modelling-error outcome, an arbiter
 * that throws, or (a reported variant expected to race) a sequential order that already violates, which would make
 * the finding no race and Lincheck's counterexample meaningless.
 */
public final class InterleavingVerdicts {
    private InterleavingVerdicts() {
    }

    public static Verdict verdict(Race race, Variant variant) {
        return verdict(Subject.of(race, variant));
    }

    public static Verdict verdict(Subject subject) {
        Race race = subject.race();
        Variant variant = subject.variant();
        Map<Schedule, RaceOutcome> outcomes = new LinkedHashMap<>();
        for (Schedule schedule : Schedule.all(subject.newScenario())) {
            RaceScenario scenario = subject.newScenario();
            try {
                outcomes.put(schedule, schedule.run(scenario, false).outcome());
            } catch (RuntimeException e) {
                RuntimeException failure = scenario.unexpectedActorFailure();
                return harnessError(subject, outcomes.size() + 1, "schedule " + schedule + ": the arbiter threw " + e
                        + (failure == null ? "" : "; an actor raised " + failure));
            }
        }
        for (Map.Entry<Schedule, RaceOutcome> run : outcomes.entrySet()) {
            if (run.getValue().modellingError()) {
                return harnessError(subject, outcomes.size(), "schedule " + run.getKey() + " ended "
                        + ((Enum<?>) run.getValue()).name() + " (" + run.getValue().meaning() + "): " + explain(subject, run.getKey()));
            }
        }
        if (variant == Variant.REPORTED && race.expected(variant) == Expectation.BUG_FOUND) {
            List<RaceOutcome> sequential = AllInterleavings.sequentialOutcomes(outcomes);
            List<Schedule> schedules = List.copyOf(outcomes.keySet());
            for (int i = 0; i < 2; i++) {
                if (sequential.get(i).violation()) {
                    Schedule order = schedules.get(i == 0 ? 0 : schedules.size() - 1);
                    return harnessError(subject, outcomes.size(), "the sequential order " + order + " already violates ("
                            + ((Enum<?>) sequential.get(i)).name() + "): the scenario shows no race");
                }
            }
        }
        long violating = outcomes.values().stream().filter(RaceOutcome::violation).count();
        Map<String, Integer> byOutcome = new LinkedHashMap<>();
        outcomes.values().forEach(o -> byOutcome.merge(((Enum<?>) o).name(), 1, Integer::sum));
        String first = outcomes.entrySet().stream().filter(e -> e.getValue().violation()).map(e -> e.getKey().actors())
                .findFirst().orElse(null);
        return new Verdict(race, Engine.ENUMERATOR, variant, violating > 0 ? Observed.BUG_FOUND : Observed.CLEAN,
                outcomes.size(), violating, violating + " of all " + outcomes.size() + " step interleavings violate",
                byOutcome + (first == null ? "" : "; first violating schedule " + first));
    }

    private static Verdict harnessError(Subject subject, long runs, String detail) {
        return new Verdict(subject.race(), Engine.ENUMERATOR, subject.variant(), Observed.HARNESS_ERROR, runs, 0,
                "harness error in " + runs + " step interleaving(s) run", subject.label() + ": " + detail);
    }

    /** What the detectors recorded and which actor raised, re-running {@code schedule} on a fresh scenario. */
    private static String explain(Subject subject, Schedule schedule) {
        RaceScenario scenario = subject.newScenario();
        schedule.run(scenario, false);
        RuntimeException failure = scenario.unexpectedActorFailure();
        return "detectors " + scenario.violations() + (failure == null ? "" : "; an actor raised " + failure);
    }
}
