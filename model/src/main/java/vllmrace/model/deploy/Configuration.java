package vllmrace.model.deploy;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import vllmrace.model.asyncio.YieldCondition;
import vllmrace.model.fix.Fix;

/**
 * An immutable set of {@link ConfigSwitch}es that are ON: how a deployment departs from upstream's defaults; and the
 * {@link YieldCondition}s that hold while it runs (a model input: which conditional awaits of the frontend suspend).
 * Kept apart from {@link vllmrace.model.fix.FixSet}: a fix is upstream code, a switch is how it is run. The model
 * components that read a switch take a Configuration next to their FixSet.
 */
public final class Configuration {
    /**
     * Upstream's defaults: every switch OFF (request ids randomized, vLLM's in-tree connectors, the AsyncScheduler), and
     * no yield condition holding (every conditional await completes at once).
     */
    public static final Configuration DEFAULT = new Configuration(EnumSet.noneOf(ConfigSwitch.class), EnumSet.noneOf(YieldCondition.class));

    private final Set<ConfigSwitch> on;
    private final Set<YieldCondition> yields;

    private Configuration(Set<ConfigSwitch> on, Set<YieldCondition> yields) {
        this.on = on;
        this.yields = yields;
    }

    public static Configuration of(ConfigSwitch... switches) {
        EnumSet<ConfigSwitch> on = EnumSet.noneOf(ConfigSwitch.class);
        Arrays.stream(switches).map(s -> Objects.requireNonNull(s, "switch")).forEach(on::add);
        return new Configuration(on, EnumSet.noneOf(YieldCondition.class));
    }

    /** The same switches, with exactly {@code conditions} holding. */
    public Configuration withYields(Set<YieldCondition> conditions) {
        EnumSet<YieldCondition> holding = EnumSet.noneOf(YieldCondition.class);
        Objects.requireNonNull(conditions, "conditions").stream().map(c -> Objects.requireNonNull(c, "condition")).forEach(holding::add);
        return new Configuration(on, holding);
    }

    /** The yield conditions that hold: which conditional frontend awaits suspend. */
    public Set<YieldCondition> yields() {
        return yields.isEmpty() ? EnumSet.noneOf(YieldCondition.class) : EnumSet.copyOf(yields);
    }

    public boolean isOn(ConfigSwitch setting) {
        return on.contains(Objects.requireNonNull(setting, "setting"));
    }

    /** Whether a switch that is ON takes {@code fix}'s code path away. */
    public boolean takesAway(Fix fix) {
        return on.stream().anyMatch(s -> s.takesAway().filter(f -> f == fix).isPresent());
    }

    /**
     * The same configuration without the switches that take away any of {@code fixes}' code paths (the yield conditions
     * kept): how a deployment reopened by its configuration is closed again.
     */
    public Configuration restoring(java.util.Collection<Fix> fixes) {
        EnumSet<ConfigSwitch> kept = on.isEmpty() ? EnumSet.noneOf(ConfigSwitch.class) : EnumSet.copyOf(on);
        kept.removeIf(s -> s.takesAway().filter(fixes::contains).isPresent());
        return kept.equals(on) ? this : new Configuration(kept, yields);
    }

    /** The scheduler class EngineCore runs: the sync {@code Scheduler} with {@link ConfigSwitch#SYNC_SCHEDULING}, else upstream's default. */
    public vllmrace.model.sched.SchedulerKind schedulerKind() {
        return on.stream().anyMatch(ConfigSwitch::selectsSyncScheduler)
                ? vllmrace.model.sched.SchedulerKind.SCHEDULER : vllmrace.model.sched.SchedulerKind.ASYNC_SCHEDULER;
    }

    /**
     * EngineCore's batch queue size ({@code max_concurrent_batches}) for a rig whose async set-up keeps {@code asyncDepth}
     * steps in flight (2; more for the pipeline-parallel scenarios): 1 under the sync scheduler at pipeline-parallel size 1.
     */
    public int batchQueueSize(int asyncDepth) {
        return schedulerKind() == vllmrace.model.sched.SchedulerKind.SCHEDULER ? 1 : asyncDepth;
    }

    public Set<ConfigSwitch> asSet() {
        return on.isEmpty() ? EnumSet.noneOf(ConfigSwitch.class) : EnumSet.copyOf(on);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Configuration other && other.on.equals(on) && other.yields.equals(yields);
    }

    @Override
    public int hashCode() {
        return on.hashCode() * 31 + yields.hashCode();
    }

    /** "defaults", or the settings that are ON; then the yield conditions that hold, if any. */
    @Override
    public String toString() {
        String settings = on.isEmpty() ? "defaults" : on.stream().map(ConfigSwitch::setting).collect(Collectors.joining("; "));
        return yields.isEmpty() ? settings
                : settings + "; yields: " + yields.stream().map(YieldCondition::label).collect(Collectors.joining(", "));
    }
}
