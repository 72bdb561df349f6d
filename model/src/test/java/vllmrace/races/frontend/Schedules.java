package vllmrace.races.frontend;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RaceScenario;
import vllmrace.races.Replay;

/**
 * Exhaustive enumeration of a race's actor schedules on one thread: every interleaving of actor 1's and actor 2's
 * coroutine steps, replayed with {@link Replay} (non-strict: an actor that ended early, e.g. by raising, is
 * skipped). Small enough to run in full: the frontend races have at most 4 + 2 steps.
 */
final class Schedules {
    private Schedules() {
    }

    /** How many steps each actor runs when it runs alone (an upper bound for every schedule). */
    static int[] stepCounts(Race race, FixSet fixes) {
        RaceScenario scenario = race.scenario(fixes);
        return new int[] {count(scenario.actor1()), count(scenario.actor2())};
    }

    private static int count(Coroutine<?> coroutine) {
        int n = 0;
        while (!coroutine.isDone()) {
            coroutine.runNextStep();
            n++;
        }
        return n;
    }

    /** Every interleaving of {@code a} ones and {@code b} twos. */
    static List<List<Integer>> interleavings(int a, int b) {
        List<List<Integer>> all = new ArrayList<>();
        build(a, b, new ArrayList<>(), all);
        return all;
    }

    private static void build(int a, int b, List<Integer> prefix, List<List<Integer>> all) {
        if (a == 0 && b == 0) {
            all.add(List.copyOf(prefix));
            return;
        }
        if (a > 0) {
            prefix.add(1);
            build(a - 1, b, prefix, all);
            prefix.remove(prefix.size() - 1);
        }
        if (b > 0) {
            prefix.add(2);
            build(a, b - 1, prefix, all);
            prefix.remove(prefix.size() - 1);
        }
    }

    /** The outcome of every schedule, keyed by schedule. */
    static Map<List<Integer>, RaceOutcome> outcomes(Race race, FixSet fixes) {
        int[] counts = stepCounts(race, fixes);
        Map<List<Integer>, RaceOutcome> outcomes = new LinkedHashMap<>();
        for (List<Integer> schedule : interleavings(counts[0], counts[1])) {
            List<Replay.Move> moves = schedule.stream().map(a -> new Replay.Move(a, null)).toList();
            outcomes.put(schedule, Replay.run(race, fixes, moves, false).outcome());
        }
        return outcomes;
    }
}
