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
        RaceScenario probe = scenario.get();
        for (List<Integer> schedule : schedules(probe.actor1().stepCount(), probe.actor2().stepCount())) {
            RaceScenario s = scenario.get();
            for (int actor : schedule) {
                Coroutine<?> c = actor == 1 ? s.actor1() : s.actor2();
                if (!c.isDone()) {
                    c.runNextStep();
                }
            }
            s.actor1().run();
            s.actor2().run();
            seen.merge(s.arbiter(), 1, Integer::sum);
        }
        return seen;
    }

    private static List<List<Integer>> schedules(int n1, int n2) {
        List<List<Integer>> all = new ArrayList<>();
        build(n1, n2, new ArrayList<>(), all);
        return all;
    }

    private static void build(int n1, int n2, List<Integer> prefix, List<List<Integer>> all) {
        if (n1 == 0 && n2 == 0) {
            all.add(List.copyOf(prefix));
            return;
        }
        if (n1 > 0) {
            prefix.add(1);
            build(n1 - 1, n2, prefix, all);
            prefix.remove(prefix.size() - 1);
        }
        if (n2 > 0) {
            prefix.add(2);
            build(n1, n2 - 1, prefix, all);
            prefix.remove(prefix.size() - 1);
        }
    }
}
