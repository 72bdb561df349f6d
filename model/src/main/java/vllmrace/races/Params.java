package vllmrace.races;

import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * One point of a scenario's family: named integer dimensions (tokens, {@code n}, other requests, how a request
 * finishes, ...), each read by the scenario with its own default. The registry gives each race a small grid of points;
 * the step enumerator asserts the race's verdict at every point, Lincheck and JCStress run the first. A point records
 * which dimensions its scenario read, so a grid cannot name a dimension the scenario ignores ({@code RaceRegistryTest}).
 */
public final class Params {
    /** Every dimension at the scenario's default. */
    public static final Params DEFAULT = new Params(Map.of());

    private final SortedMap<String, Integer> values;
    private final Set<String> read = ConcurrentHashMap.newKeySet();

    private Params(Map<String, Integer> values) {
        this.values = new TreeMap<>(values);
    }

    /** A point with these dimensions set, the others at the scenario's defaults: {@code of("n", 2, "otherRequests", 1)}. */
    public static Params of(Object... nameValuePairs) {
        if (nameValuePairs.length % 2 != 0) {
            throw new IllegalArgumentException("Params.of takes name, value pairs");
        }
        Map<String, Integer> values = new TreeMap<>();
        for (int i = 0; i < nameValuePairs.length; i += 2) {
            values.put((String) nameValuePairs[i], (Integer) nameValuePairs[i + 1]);
        }
        return new Params(values);
    }

    /**
     * The dimension's value at this point, or {@code defaultValue}.
     *
     * @throws IllegalArgumentException when the value is below {@code min}: a grid point the scenario cannot build
     */
    public int get(String name, int defaultValue, int min) {
        read.add(name);
        int value = values.getOrDefault(name, defaultValue);
        if (value < min) {
            throw new IllegalArgumentException(name + " must be >= " + min + ", got " + value);
        }
        return value;
    }

    /** The dimensions this point sets that no scenario built from it has read. */
    public Set<String> unread() {
        return values.keySet().stream().filter(name -> !read.contains(name)).collect(Collectors.toSet());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Params other && other.values.equals(values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    /** {@code n=2, otherRequests=1}, or {@code default}. */
    @Override
    public String toString() {
        return values.isEmpty() ? "default" : values.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(", "));
    }
}
