package vllmrace.races;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.fix.Fix;

/**
 * The fixes that close a race, as the registry declares them and every engine checks: a full closer closes the race
 * on its own, on top of every fix that is not a closer; a partial closer alone removes part of it and leaves the
 * invariants named here broken (seed 003's scheduler skip keeps the engine alive, CN1 remains), and that is asserted
 * too. The reported variant switches every closer off.
 *
 * @param full    closers that close the race alone
 * @param partial closers that alone leave these invariants (of lifecycle §5: "CN1", "SC4", ...) broken
 */
public record Closers(Set<Fix> full, Map<Fix, Set<String>> partial) {

    public Closers {
        full = full.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(full));
        partial = Map.copyOf(partial);
        for (Fix fix : partial.keySet()) {
            if (full.contains(fix)) {
                throw new IllegalArgumentException(fix + " is declared both a full and a partial closer");
            }
        }
    }

    /** These fixes each close the race alone. */
    public static Closers of(Fix... full) {
        return new Closers(full.length == 0 ? Set.of() : EnumSet.copyOf(Arrays.asList(full)), Map.of());
    }

    /** No closer: a positive control. */
    public static Closers none() {
        return of();
    }

    /** And {@code fix}, which alone leaves {@code invariants} broken. */
    public Closers partly(Fix fix, String... invariants) {
        Objects.requireNonNull(fix, "fix");
        if (invariants.length == 0) {
            throw new IllegalArgumentException(fix + ": a partial closer names the invariants it leaves broken");
        }
        Map<Fix, Set<String>> more = new EnumMap<>(Fix.class);
        more.putAll(partial);
        more.put(fix, Set.of(invariants));
        return new Closers(full, more);
    }

    /** Every closer, full and partial: the fixes the reported variant switches off. */
    public Set<Fix> all() {
        EnumSet<Fix> all = EnumSet.noneOf(Fix.class);
        all.addAll(full);
        all.addAll(partial.keySet());
        return all;
    }

    /** The invariants {@code fix} alone leaves broken: empty for a full closer. */
    public Set<String> leaves(Fix fix) {
        return partial.getOrDefault(fix, Set.of());
    }

    public boolean isEmpty() {
        return full.isEmpty() && partial.isEmpty();
    }
}
