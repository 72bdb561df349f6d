package vllmrace.races;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Exhaustive exploration of a scenario's two actors at step granularity (every step is atomic: the event loop's or
 * the busy loop's serialisation): every merge of the two step sequences ({@link Schedule#all}) runs on a fresh
 * scenario. The complete check at step level, and the engine behind the fix-switch matrix.
 */
public final class AllInterleavings {
    private AllInterleavings() {
    }

    /** Each outcome seen, with the number of schedules that produced it. */
    public static Map<RaceOutcome, Integer> outcomes(Supplier<? extends RaceScenario> scenario) {
        Map<RaceOutcome, Integer> seen = new LinkedHashMap<>();
        for (RaceOutcome outcome : bySchedule(scenario).values()) {
            seen.merge(outcome, 1, Integer::sum);
        }
        return seen;
    }

    /**
     * The judged outcome of every schedule, in enumeration order: the first is actor 1 then actor 2, the last actor 2
     * then actor 1 (the two sequential orders).
     */
    public static Map<Schedule, RaceOutcome> bySchedule(Supplier<? extends RaceScenario> scenario) {
        Map<Schedule, RaceOutcome> out = new LinkedHashMap<>();
        for (Schedule schedule : Schedule.all(scenario.get())) {
            out.put(schedule, schedule.run(scenario.get(), false).outcome());
        }
        return out;
    }

    /**
     * Where a search for the first violating schedule stopped. {@code explored} counts the schedules run, the stopping
     * one included; {@code total} is how many the scenario has (every merge of its two step lists). {@code schedule} and
     * {@code outcome} are the stopping schedule's: a violation, a modelling error, or (none violated) null and null.
     * {@code error} names a modelling error or a throwing arbiter, else null: never a find. {@code total} is computed
     * ({@code (n1 + n2) choose n1}); {@code explored} is counted schedule by schedule.
     */
    public record FirstViolation(int explored, int total, Schedule schedule, RaceOutcome outcome, String error) {
        public boolean found() {
            return error == null && outcome != null && outcome.violation();
        }

        /** Every schedule ran (none violated, no error): the whole enumeration, counted. */
        public boolean exhaustive() {
            return error == null && outcome == null && explored == total;
        }
    }

    /**
     * Runs the scenario's schedules in enumeration order ({@link Schedule#all}), each on a fresh scenario, and stops at
     * the first that violates or is a modelling error (its outcome, or an arbiter that throws); with none, every
     * schedule has run. The step enumerator's time to a first counterexample, and its whole enumeration of a clean one.
     */
    public static FirstViolation firstViolation(Supplier<? extends RaceScenario> scenario) {
        RaceScenario probe = scenario.get();
        int steps1 = probe.actor1().stepCount();
        int steps2 = probe.actor2().stepCount();
        int total = merges(steps1, steps2);
        FirstViolation[] stop = new FirstViolation[1];
        int[] explored = new int[1];
        // the schedules of Schedule.all, in its order, generated one at a time so the search can stop at the first
        visit(steps1, steps2, new StringBuilder(), actors -> {
            explored[0]++;
            Schedule schedule = Schedule.of(actors);
            RaceScenario fresh = scenario.get();
            RaceOutcome outcome;
            try {
                outcome = schedule.run(fresh, false).outcome();
            } catch (RuntimeException e) {
                RuntimeException failure = fresh.unexpectedActorFailure();
                stop[0] = new FirstViolation(explored[0], total, schedule, null, "schedule " + schedule + ": the arbiter threw " + e
                        + (failure == null ? "" : "; an actor raised " + failure));
                return true;
            }
            if (outcome.modellingError()) {
                stop[0] = new FirstViolation(explored[0], total, schedule, outcome, "schedule " + schedule + " ended "
                        + ((Enum<?>) outcome).name() + " (a modelling error)");
                return true;
            }
            if (outcome.violation()) {
                stop[0] = new FirstViolation(explored[0], total, schedule, outcome, null);
                return true;
            }
            return false;
        });
        return stop[0] != null ? stop[0] : new FirstViolation(explored[0], total, null, null, null);
    }

    /** Calls {@code visitor} with each merge of n1 1s and n2 2s after {@code prefix}, 1 before 2; true stops. */
    private static boolean visit(int n1, int n2, StringBuilder prefix, java.util.function.Predicate<String> visitor) {
        if (n1 == 0 && n2 == 0) {
            return visitor.test(prefix.toString());
        }
        for (int actor = 1; actor <= 2; actor++) {
            if ((actor == 1 ? n1 : n2) > 0) {
                prefix.append((char) ('0' + actor));
                boolean stopped = visit(actor == 1 ? n1 - 1 : n1, actor == 2 ? n2 - 1 : n2, prefix, visitor);
                prefix.setLength(prefix.length() - 1);
                if (stopped) {
                    return true;
                }
            }
        }
        return false;
    }

    /** How many merges two step lists have: (n1 + n2) choose n1. */
    static int merges(int n1, int n2) {
        long c = 1;
        for (int i = 1; i <= n1; i++) {
            c = c * (n2 + i) / i;
        }
        return (int) Math.min(c, Integer.MAX_VALUE);
    }

    /** Runs one schedule ({@code "2122"}) on {@code scenario}, then the arbiter: the judged outcome. */
    public static RaceOutcome run(RaceScenario scenario, String schedule) {
        return Schedule.of(schedule).run(scenario, false).outcome();
    }

    /**
     * How many distinct step sequences (the model's step log after the set-up, arbiter included) the scenario's
     * schedules produce: what a model checker that switches only between atomic steps can observe.
     */
    public static int distinctStepSequences(Supplier<? extends RaceScenario> scenario) {
        Set<List<String>> seen = new HashSet<>();
        for (Schedule schedule : Schedule.all(scenario.get())) {
            seen.add(schedule.run(scenario.get(), false).steps());
        }
        return seen.size();
    }

    /** The two sequential orders' outcomes (actor 1 first, then actor 2 first) of a {@link #bySchedule} map. */
    public static List<RaceOutcome> sequentialOutcomes(Map<Schedule, RaceOutcome> bySchedule) {
        List<RaceOutcome> all = List.copyOf(bySchedule.values());
        return List.of(all.get(0), all.get(all.size() - 1));
    }
}
