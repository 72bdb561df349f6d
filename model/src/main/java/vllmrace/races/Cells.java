package vllmrace.races;

import java.util.Arrays;
import java.util.List;

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

    /** Every (race, variant) subject {@code engine} judges in {@code shard}: its variants the catalogue expects something of. */
    public static List<Subject> verdicts(Engine engine, Shard shard) {
        return races(shard).stream().flatMap(race -> engine.variants().stream()
                .filter(variant -> race.expected(variant) != Expectation.NOT_APPLICABLE)
                .map(variant -> Subject.of(race, variant))).toList();
    }

    /** The variants {@code engine} judges of {@code race}. */
    public static List<Variant> variants(Engine engine, Race race) {
        return engine.variants().stream().filter(v -> race.expected(v) != Expectation.NOT_APPLICABLE).toList();
    }
}
