package vllmrace.lincheck.connector;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import vllmrace.races.Schedule;
import vllmrace.races.connector.LateLoadCompletionUnionScenario;
import vllmrace.races.connector.SeedThreeInvariant;

/**
 * What {@link SeedThreeUnderCheck}'s arbiter saw over one Lincheck run: how many invocations reached it, in how many
 * each {@link SeedThreeInvariant} was broken, and which step-level interleavings (the order in which the two actors'
 * atomic steps ran) those invocations were. Lincheck restores the static state it tracks after every invocation, so
 * {@link FixDirectionMatrix} tells Lincheck to ignore this class: what it accumulates survives the run.
 */
final class SeedThreeTally {
    private static final AtomicLong RUNS = new AtomicLong();
    private static final Map<SeedThreeInvariant, AtomicLong> VIOLATING = new EnumMap<>(SeedThreeInvariant.class);
    private static final Set<String> SCHEDULES = ConcurrentHashMap.newKeySet();

    static {
        for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
            VIOLATING.put(invariant, new AtomicLong());
        }
    }

    private SeedThreeTally() {
    }

    /** What one run of the arbiter found. */
    record Snapshot(long runs, Map<SeedThreeInvariant, Long> violating, int distinctSchedules) {
    }

    static void reset() {
        RUNS.set(0);
        VIOLATING.values().forEach(count -> count.set(0));
        SCHEDULES.clear();
    }

    /**
     * The arbiter of one invocation, in full: runs the scenario's arbiter, reads the four invariants and records them with
     * the interleaving the steps ran in. Here, in a class Lincheck ignores, so none of it is tracked: it runs alone after
     * both threads, with nothing to interleave.
     */
    static void judge(LateLoadCompletionUnionScenario scenario) {
        String schedule = Schedule.fromSteps(scenario, scenario.stepLog().entriesSince(scenario.setupSteps())).actors();
        scenario.arbiter();
        Set<SeedThreeInvariant> broken = EnumSet.noneOf(SeedThreeInvariant.class);
        for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
            if (!invariant.holds(scenario.rig().violations())) {
                broken.add(invariant);
            }
        }
        record(schedule, broken);
    }

    /**
     * One invocation's verdict.
     *
     * @param schedule which actor ran each atomic step, in order (e.g. {@code 1222211111})
     * @param broken   the invariants the invocation broke
     */
    static void record(String schedule, Set<SeedThreeInvariant> broken) {
        RUNS.incrementAndGet();
        SCHEDULES.add(schedule);
        for (SeedThreeInvariant invariant : broken) {
            VIOLATING.get(invariant).incrementAndGet();
        }
    }

    static Snapshot snapshot() {
        Map<SeedThreeInvariant, Long> violating = new EnumMap<>(SeedThreeInvariant.class);
        VIOLATING.forEach((invariant, count) -> violating.put(invariant, count.get()));
        return new Snapshot(RUNS.get(), Map.copyOf(violating), SCHEDULES.size());
    }
}
