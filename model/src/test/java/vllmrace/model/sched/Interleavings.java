package vllmrace.model.sched;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RaceScenario;

/**
 * Runs a scenario under every interleaving of its two actors' steps on one thread, exhaustively (what Lincheck
 * explores, without its bound): each schedule is a string of actor numbers, e.g. {@code "2122"}.
 */
final class Interleavings {
    private Interleavings() {
    }

    /** The outcome of each interleaving, keyed by its actor schedule. */
    static Map<String, RaceOutcome> all(Supplier<? extends RaceScenario> scenarios) {
        RaceScenario probe = scenarios.get();
        int n1 = countSteps(probe.actor1());
        int n2 = countSteps(probe.actor2());
        Map<String, RaceOutcome> out = new LinkedHashMap<>();
        for (String schedule : schedules(n1, n2)) {
            out.put(schedule, run(scenarios.get(), schedule));
        }
        return out;
    }

    /** Runs one schedule, then the arbiter. */
    static RaceOutcome run(RaceScenario scenario, String schedule) {
        for (char actor : schedule.toCharArray()) {
            (actor == '1' ? scenario.actor1() : scenario.actor2()).runNextStep();
        }
        return scenario.arbiter();
    }

    private static int countSteps(Coroutine<?> coroutine) {
        int n = 0;
        while (!coroutine.isDone()) {
            coroutine.runNextStep();
            n++;
        }
        return n;
    }

    private static List<String> schedules(int n1, int n2) {
        List<String> out = new ArrayList<>();
        build("", n1, n2, out);
        return out;
    }

    private static void build(String prefix, int n1, int n2, List<String> out) {
        if (n1 == 0 && n2 == 0) {
            out.add(prefix);
            return;
        }
        if (n1 > 0) {
            build(prefix + "1", n1 - 1, n2, out);
        }
        if (n2 > 0) {
            build(prefix + "2", n1, n2 - 1, out);
        }
    }
}
