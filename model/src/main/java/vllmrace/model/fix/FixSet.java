package vllmrace.model.fix;

import java.util.Collection;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/** An immutable set of fixes that are ON. Every model component takes one at construction. */
public final class FixSet {
    private final Set<Fix> on;

    private FixSet(Set<Fix> on) {
        this.on = on;
    }

    /** Every fix ON, proposals included (merged, proposed upstream, and the suite's own). */
    public static FixSet all() {
        return new FixSet(EnumSet.allOf(Fix.class));
    }

    /** The fixes vLLM has merged ({@link Provenance#merged()}): what vLLM main runs, as far as the model goes. */
    public static FixSet upstreamMain() {
        EnumSet<Fix> merged = EnumSet.noneOf(Fix.class);
        for (Fix fix : Fix.values()) {
            if (fix.provenance().merged()) {
                merged.add(fix);
            }
        }
        return of(merged);
    }

    /** Every fix OFF. */
    public static FixSet none() {
        return new FixSet(EnumSet.noneOf(Fix.class));
    }

    public static FixSet of(Collection<Fix> fixes) {
        return fixes.isEmpty() ? none() : new FixSet(EnumSet.copyOf(fixes));
    }

    public FixSet with(Fix fix) {
        EnumSet<Fix> next = copy();
        next.add(Objects.requireNonNull(fix, "fix"));
        return new FixSet(next);
    }

    public FixSet without(Fix fix) {
        EnumSet<Fix> next = copy();
        next.remove(Objects.requireNonNull(fix, "fix"));
        return new FixSet(next);
    }

    public boolean isOn(Fix fix) {
        return on.contains(fix);
    }

    public Set<Fix> asSet() {
        return copy();
    }

    private EnumSet<Fix> copy() {
        return on.isEmpty() ? EnumSet.noneOf(Fix.class) : EnumSet.copyOf(on);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FixSet other && other.on.equals(on);
    }

    @Override
    public int hashCode() {
        return on.hashCode();
    }

    @Override
    public String toString() {
        if (on.isEmpty()) {
            return "{}";
        }
        return on.stream().map(Enum::name).collect(Collectors.joining(", ", "{", "}"));
    }
}
