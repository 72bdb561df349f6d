package vllmrace.races;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The step enumerator's verdicts: every schedule of a subject's two actors ({@link AllInterleavings}), judged. The one
 * verdict path of this engine, called by the tests and the catalogue alike.
 *
 * <p>A harness error, naming the schedule: a schedule that ends in the scenario's modelling-error outcome, an arbiter
 * that throws, or (a reported variant expected to race, at the default point of its family) a sequential order that
 * already violates, which would make the finding no race and Lincheck's counterexample meaningless.
 */
public final class InterleavingVerdicts {
    private InterleavingVerdicts() {
    }

    public static Verdict verdict(Race race, Variant variant) {
        return verdict(Subject.of(race, variant));
    }

    /**
     * The verdict over every point of the race's family ({@link Race#grid()}): the cell is what the catalogue expects
     * only if every point is; otherwise it is the first point that is not, named in the figures.
     */
    public static Verdict verdict(Subject subject) {
        List<Verdict> points = new ArrayList<>();
        for (Params point : subject.race().grid()) {
            points.add(atPoint(subject, point));
        }
        Verdict off = points.stream().filter(v -> v.observed() == Observed.HARNESS_ERROR).findFirst()
                .orElse(points.stream().filter(v -> !v.asExpected()).findFirst().orElse(null));
        long runs = points.stream().mapToLong(Verdict::runs).sum();
        long violating = points.stream().mapToLong(Verdict::violatingRuns).sum();
        StringBuilder figures = new StringBuilder();
        for (int i = 0; i < points.size(); i++) {
            figures.append(i == 0 ? "" : "; ").append(subject.race().grid().get(i)).append(": ").append(points.get(i).figures());
        }
        Verdict basis = off != null ? off : points.get(0);
        String detail = points.size() == 1 ? basis.detail() : (off == null ? "every point of the family: " : "at "
                + subject.race().grid().get(points.indexOf(off)) + ": ") + basis.detail();
        return new Verdict(subject, Engine.ENUMERATOR, basis.observed(), runs, violating,
                points.size() == 1 ? points.get(0).figures() : figures.toString(), detail);
    }

    /** The verdict at one point of the race's family. */
    public static Verdict atPoint(Subject subject, Params point) {
        Race race = subject.race();
        Variant variant = subject.variant();
        Map<Schedule, RaceOutcome> outcomes = new LinkedHashMap<>();
        Set<Schedule> tolerated = new HashSet<>();
        for (Schedule schedule : Schedule.all(subject.newScenario(point))) {
            RaceScenario scenario = subject.newScenario(point);
            try {
                RaceOutcome outcome = schedule.run(scenario, false).outcome();
                outcomes.put(schedule, outcome);
                if (outcome.violation() && tolerates(subject, scenario)) {
                    tolerated.add(schedule);
                }
            } catch (RuntimeException e) {
                RuntimeException failure = scenario.unexpectedActorFailure();
                return harnessError(subject, outcomes.size() + 1, "schedule " + schedule + ": the arbiter threw " + e
                        + (failure == null ? "" : "; an actor raised " + failure));
            }
        }
        for (Map.Entry<Schedule, RaceOutcome> run : outcomes.entrySet()) {
            if (run.getValue().modellingError()) {
                return harnessError(subject, outcomes.size(), "schedule " + run.getKey() + " ended "
                        + ((Enum<?>) run.getValue()).name() + " (" + run.getValue().meaning() + "): " + explain(subject, point, run.getKey()));
            }
        }
        // at the default point, the one Lincheck judges against the sequential orders (other points of the family may
        // violate in every order: maxTokens 2 makes any abort during decoding a double free without #33377)
        if (variant == Variant.REPORTED && race.expected(variant) == Expectation.BUG_FOUND && point.equals(race.grid().get(0))) {
            List<RaceOutcome> sequential = AllInterleavings.sequentialOutcomes(outcomes);
            List<Schedule> schedules = List.copyOf(outcomes.keySet());
            long violatingOrders = sequential.stream().filter(RaceOutcome::violation).count();
            if (race.window() == Window.ORDER && violatingOrders != 1) {
                return harnessError(subject, outcomes.size(), "the registry says an order of events opens the window, so exactly one "
                        + "sequential order must violate; " + violatingOrders + " do");
            }
            if (race.window() == Window.SEQUENTIAL && violatingOrders != 2) {
                return harnessError(subject, outcomes.size(), "the registry says both sequential orders show the race; "
                        + violatingOrders + " do");
            }
            if (race.window() == Window.LOST_EVENT && outcomes.values().stream().anyMatch(o -> !o.violation())) {
                return harnessError(subject, outcomes.size(), "the registry says an owed event never comes, so every schedule "
                        + "must violate; " + outcomes.values().stream().filter(o -> !o.violation()).count() + " do not");
            }
            for (int i = 0; i < 2 && race.window() == Window.INTERLEAVING; i++) {
                if (sequential.get(i).violation()) {
                    Schedule order = schedules.get(i == 0 ? 0 : schedules.size() - 1);
                    return harnessError(subject, outcomes.size(), "the sequential order " + order + " already violates ("
                            + ((Enum<?>) sequential.get(i)).name() + "): the scenario shows no race");
                }
            }
        }
        if (!subject.tolerated().isEmpty() && tolerated.isEmpty()) {
            return harnessError(subject, outcomes.size(), "the registry says " + subject.only() + " alone leaves "
                    + subject.tolerated() + " broken, but no schedule breaks it any more: update the race's closers");
        }
        long violating = outcomes.entrySet().stream().filter(e -> e.getValue().violation() && !tolerated.contains(e.getKey())).count();
        Map<String, Integer> byOutcome = new LinkedHashMap<>();
        outcomes.values().forEach(o -> byOutcome.merge(((Enum<?>) o).name(), 1, Integer::sum));
        String first = outcomes.entrySet().stream().filter(e -> e.getValue().violation() && !tolerated.contains(e.getKey()))
                .map(e -> e.getKey().actors()).findFirst().orElse(null);
        String leftAlone = tolerated.isEmpty() ? "" : "; " + tolerated.size() + " break only " + subject.tolerated()
                + ", which the registry says " + subject.only() + " alone leaves";
        return new Verdict(subject, Engine.ENUMERATOR, violating > 0 ? Observed.BUG_FOUND : Observed.CLEAN,
                outcomes.size(), violating, violating + " of all " + outcomes.size() + " step interleavings violate" + leftAlone,
                byOutcome + (first == null ? "" : "; first violating schedule " + first));
    }

    /** The run broke only invariants a partial closer is declared to leave (never true for any other subject). */
    static boolean tolerates(Subject subject, RaceScenario scenario) {
        Set<String> broken = new HashSet<>();
        scenario.violations().forEach(v -> broken.add(v.kind().invariant()));
        return !subject.tolerated().isEmpty() && !broken.isEmpty() && subject.tolerated().containsAll(broken);
    }

    private static Verdict harnessError(Subject subject, long runs, String detail) {
        return new Verdict(subject, Engine.ENUMERATOR, Observed.HARNESS_ERROR, runs, 0,
                "harness error in " + runs + " step interleaving(s) run", subject.label() + ": " + detail);
    }

    /** What the detectors recorded and which actor raised, re-running {@code schedule} on a fresh scenario. */
    private static String explain(Subject subject, Params point, Schedule schedule) {
        RaceScenario scenario = subject.newScenario(point);
        schedule.run(scenario, false);
        RuntimeException failure = scenario.unexpectedActorFailure();
        return "detectors " + scenario.violations() + (failure == null ? "" : "; an actor raised " + failure);
    }
}
