package vllmrace.model.deploy;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import vllmrace.model.fix.Fix;

/**
 * An immutable set of {@link ConfigSwitch}es that are ON: how a deployment departs from upstream's defaults. Kept apart
 * from {@link vllmrace.model.fix.FixSet}: a fix is upstream code, a switch is how it is run. The model components that
 * read a switch take a Configuration next to their FixSet.
 */
public final class Configuration {
    /** Upstream's defaults: every switch OFF (request ids randomized, vLLM's in-tree connectors, the AsyncScheduler). */
    public static final Configuration DEFAULT = new Configuration(EnumSet.noneOf(ConfigSwitch.class));

    private final Set<ConfigSwitch> on;

    private Configuration(Set<ConfigSwitch> on) {
        this.on = on;
    }

    public static Configuration of(ConfigSwitch... switches) {
        EnumSet<ConfigSwitch> on = EnumSet.noneOf(ConfigSwitch.class);
        Arrays.stream(switches).map(s -> Objects.requireNonNull(s, "switch")).forEach(on::add);
        return new Configuration(on);
    }

    public boolean isOn(ConfigSwitch setting) {
        return on.contains(Objects.requireNonNull(setting, "setting"));
    }

    /** Whether a switch that is ON takes {@code fix}'s code path away. */
    public boolean takesAway(Fix fix) {
        return on.stream().anyMatch(s -> s.takesAway().filter(f -> f == fix).isPresent());
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
        return o instanceof Configuration other && other.on.equals(on);
    }

    @Override
    public int hashCode() {
        return on.hashCode();
    }

    /** "defaults", or the settings that are ON. */
    @Override
    public String toString() {
        return on.isEmpty() ? "defaults" : on.stream().map(ConfigSwitch::setting).collect(Collectors.joining("; "));
    }
}
