package vllmrace.model.asyncio;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * A frontend step boundary: the upstream {@code await} it stands for and whether it suspends there. An await on a
 * future that is already done returns without suspending, and pyzmq sends at once when the socket takes the message,
 * so most awaits yield only under a {@link YieldCondition}; where one does not yield, the model runs the steps on both
 * sides as one atomic step.
 *
 * @param upstream the await, as upstream writes it, and why it yields or not
 * @param kind     always, never, or only when one of {@code when} holds
 * @param when     the conditions under which a {@link Kind#WHEN} boundary yields (any one suffices), else empty
 */
public record Await(String upstream, Kind kind, Set<YieldCondition> when) {

    /** Whether the boundary suspends. */
    public enum Kind {
        /** Always: {@code asyncio.sleep(0)}, a future not yet done, or the boundary is another process's. */
        ALWAYS,
        /** Never: a done future, a send that goes out at once, or no await at all between the two steps. */
        NEVER,
        /** Only when one of its conditions holds. */
        WHEN
    }

    public Await {
        if (Objects.requireNonNull(upstream, "upstream").isBlank()) {
            throw new IllegalArgumentException("an await names its upstream line");
        }
        Objects.requireNonNull(kind, "kind");
        when = when.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(when));
        if ((kind == Kind.WHEN) == when.isEmpty()) {
            throw new IllegalArgumentException("a WHEN boundary, and only it, names its conditions: " + kind + " " + when);
        }
    }

    public static Await always(String upstream) {
        return new Await(upstream, Kind.ALWAYS, Set.of());
    }

    public static Await never(String upstream) {
        return new Await(upstream, Kind.NEVER, Set.of());
    }

    public static Await when(String upstream, YieldCondition first, YieldCondition... more) {
        EnumSet<YieldCondition> conditions = EnumSet.of(first, more);
        return new Await(upstream, Kind.WHEN, conditions);
    }

    /** Whether it suspends while {@code holding} hold. */
    public boolean yields(Set<YieldCondition> holding) {
        return switch (kind) {
            case ALWAYS -> true;
            case NEVER -> false;
            case WHEN -> when.stream().anyMatch(holding::contains);
        };
    }

    /** "always", "never" or "when a | b". */
    public String kindLabel() {
        return switch (kind) {
            case ALWAYS -> "always";
            case NEVER -> "never";
            case WHEN -> "when " + String.join(" | ", EnumSet.copyOf(when).stream().map(YieldCondition::label).toList());
        };
    }
}
