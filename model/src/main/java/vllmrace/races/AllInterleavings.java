package vllmrace.races;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import vllmrace.model.asyncio.Coroutine;

/**
 * Exhaustive exploration of a scenario's two actors at step granularity (every step is atomic: the event loop's or
 * the busy loop's serialisation): every merge of the two step sequences runs on a fresh scenario. Used as a cross-check of the Lincheck
 * model checking (which explores the same interleavings through {@code Coroutine.runNextStep}).
 */
public final class AllInterleavings {
    private AllInterleavings() {
    }

    /**
     * Each outcome seen, with the number of schedules (a schedule = which actor runs each step) that produced it.
     * Schedules cover every merge of the two coroutines' full step lists; a move for an actor that already ended
     * (a step raised) is skipped, and steps left when a schedule ends run before the arbiter.
     */
    public static Map<RaceOutcome, Integer> outcomes(Supplier<RaceScenario> scenario) {
        Map<RaceOutcome, Integer> seen = new LinkedHashMap<>();
        for (RaceOutcome outcome : bySchedule(scenario).values()) {
            seen.merge(outcome, 1, Integer::sum);
        }
        return seen;
    }

    /**
     * The outcome of every schedule, keyed by the schedule written as actor numbers ({@code "2122"}), in enumeration
     * order: the first is actor 1 then actor 2, the last actor 2 then actor 1 (the two sequential orders).
     */
    public static Map<String, RaceOutcome> bySchedule(Supplier<? extends RaceScenario> scenario) {
        Map<String, RaceOutcome> out = new LinkedHashMap<>();
        for (String schedule : schedules(scenario)) {
            out.put(schedule, run(scenario.get(), schedule));
        }
        return out;
    }

    /** Runs one schedule ({@code "2122"}: the actor of each step) on {@code scenario}, then the arbiter. */
    public static RaceOutcome run(RaceScenario scenario, String schedule) {
        for (char actor : schedule.toCharArray()) {
            if (actor != '1' && actor != '2') {
                throw new IllegalArgumentException("a schedule is a string of 1s and 2s, got '" + schedule + "'");
            }
            Coroutine<?> c = actor == '1' ? scenario.actor1() : scenario.actor2();
            if (!c.isDone()) {
                c.runNextStep();
            }
        }
        scenario.actor1().run();
        scenario.actor2().run();
        return scenario.arbiter();
    }

    /**
     * How many distinct step sequences (the model's step log after the set-up, arbiter included) the scenario's
     * schedules produce: what a model checker that switches only between atomic steps can observe.
     */
    public static int distinctStepSequences(Supplier<? extends RaceScenario> scenario) {
        java.util.Set<List<String>> seen = new java.util.HashSet<>();
        for (String schedule : schedules(scenario)) {
            RaceScenario s = scenario.get();
            run(s, schedule);
            seen.add(List.copyOf(s.stepLog().entriesSince(s.setupSteps())));
        }
        return seen.size();
    }

    /** The two sequential orders' outcomes (actor 1 first, then actor 2 first) of a {@link #bySchedule} map. */
    public static List<RaceOutcome> sequentialOutcomes(Map<String, RaceOutcome> bySchedule) {
        List<RaceOutcome> all = List.copyOf(bySchedule.values());
        return List.of(all.get(0), all.get(all.size() - 1));
    }

    /** Every merge of the two actors' full step lists (a probe scenario counts them), as strings of actor numbers. */
    private static List<String> schedules(Supplier<? extends RaceScenario> scenario) {
        RaceScenario probe = scenario.get();
        List<String> all = new ArrayList<>();
        build(probe.actor1().stepCount(), probe.actor2().stepCount(), "", all);
        return all;
    }

    private static void build(int n1, int n2, String prefix, List<String> all) {
        if (n1 == 0 && n2 == 0) {
            all.add(prefix);
            return;
        }
        if (n1 > 0) {
            build(n1 - 1, n2, prefix + "1", all);
        }
        if (n2 > 0) {
            build(n1, n2 - 1, prefix + "2", all);
        }
    }
}
