package vllmrace.races;

import java.util.Arrays;
import java.util.List;
import vllmrace.model.deploy.Profile;

/**
 * The verdict cells of the suite, one list for the tests and the catalogue alike: each engine's (race, variant)
 * subjects and the fix-switch matrix rows, of one {@link Shard}.
 */
public final class Cells {
    private Cells() {
    }

    /** The races of a shard, in registry order. */
    public static List<Race> races(Shard shard) {
        return Arrays.stream(Race.values()).filter(shard::includes).toList();
    }

    /** Every subject {@code engine} judges in {@code shard} ({@link #subjects}). */
    public static List<Subject> verdicts(Engine engine, Shard shard) {
        return races(shard).stream().flatMap(race -> subjects(engine, race).stream()).toList();
    }

    /**
     * The subjects {@code engine} judges of {@code race}: each of its variants the catalogue expects something of (vLLM
     * main once per deployment {@link Profile}), and,
     * for the step enumerator and Lincheck, each closer of a race with several, alone ({@link Variant#ONLY_CLOSER}): a
     * closer that only works next to another would otherwise pass unseen.
     */
    public static List<Subject> subjects(Engine engine, Race race) {
        List<Subject> subjects = new java.util.ArrayList<>();
        for (Variant variant : variants(engine, race)) {
            if (variant == Variant.UPSTREAM_MAIN) {
                // a profile whose scheduler class cannot reach the race has no cell (Race.occursUnder, SchedulerKindTest)
                java.util.Arrays.stream(Profile.values()).filter(p -> race.expected(p) != Expectation.NOT_APPLICABLE)
                        .forEach(p -> subjects.add(Subject.onMain(race, p)));
            } else {
                subjects.add(Subject.of(race, variant));
            }
        }
        if (engine != Engine.JCSTRESS && race.closedBy().size() > 1) {
            java.util.Arrays.stream(vllmrace.model.fix.Fix.values()).filter(race.closedBy()::contains)
                    .forEach(f -> subjects.add(Subject.onlyCloser(race, f)));
        }
        return subjects;
    }

    /** The variants {@code engine} judges of {@code race}. */
    public static List<Variant> variants(Engine engine, Race race) {
        return engine.variants().stream().filter(v -> race.expected(v) != Expectation.NOT_APPLICABLE).toList();
    }
}
