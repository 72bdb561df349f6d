package vllmrace.races;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One of N disjoint shards of the suite's race work, for a CI engine that runs N jobs ({@code -Dvllmrace.shard=I/N},
 * {@code ./catalogue --shard I/N}). A race's cells (every engine and variant, its fix-switch matrix row, its
 * linearizability cells) go to shard {@code ordinal % N + 1}; a unit that is no race's (a linearizability check's
 * every-fix cell, seed 003's fix-direction matrix) goes to shard {@code index % N + 1} by its own index. The model's
 * unit tests are no cell and run in every shard. {@code 1/1} is everything.
 */
public record Shard(int index, int count) {
    /** The system property that selects a shard. */
    public static final String PROPERTY = "vllmrace.shard";
    private static final Pattern FORM = Pattern.compile("(\\d{1,4})/(\\d{1,4})");

    public static final Shard ALL = new Shard(1, 1);

    public Shard {
        if (count < 1 || index < 1 || index > count) {
            throw new IllegalArgumentException("a shard is I/N with 1 <= I <= N, got " + index + "/" + count);
        }
    }

    /**
     * Parses {@code I/N}.
     *
     * @throws IllegalArgumentException naming the text, when it is not {@code I/N} with {@code 1 <= I <= N}
     */
    public static Shard parse(String text) {
        Matcher m = FORM.matcher(text == null ? "" : text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("a shard is I/N with 1 <= I <= N (e.g. 2/4), got '" + text + "'");
        }
        int index = Integer.parseInt(m.group(1));
        int count = Integer.parseInt(m.group(2));
        if (count < 1 || index < 1 || index > count) {
            throw new IllegalArgumentException("a shard is I/N with 1 <= I <= N (e.g. 2/4), got '" + text + "'");
        }
        return new Shard(index, count);
    }

    /** The shard {@code -Dvllmrace.shard} selects; every cell when it is unset or empty. */
    public static Shard current() {
        String configured = System.getProperty(PROPERTY, "");
        return configured.isBlank() ? ALL : parse(configured);
    }

    /** True when {@code race}'s cells are this shard's. */
    public boolean includes(Race race) {
        return includesIndex(race.ordinal());
    }

    /** True when the unit numbered {@code unitIndex} (within its own kind of unit) is this shard's. */
    public boolean includesIndex(int unitIndex) {
        return unitIndex % count == index - 1;
    }

    @Override
    public String toString() {
        return index + "/" + count;
    }
}
