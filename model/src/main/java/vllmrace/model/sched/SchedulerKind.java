package vllmrace.model.sched;

/**
 * Which scheduler class EngineCore runs: {@code SchedulerConfig.get_scheduler_cls()} (vllm/config/scheduler.py@01230b40)
 * returns {@code AsyncScheduler} when {@code async_scheduling} is set, else {@code Scheduler}. {@code AsyncScheduler}
 * (async_scheduler.py@014b2350) overrides only {@code _update_after_schedule} (it reserves an output placeholder for each
 * step that samples) and {@code _update_request_with_output} (it gives one back per sampled token and asserts
 * {@code num_output_placeholders >= 0}); {@code schedule()}, {@code _preempt_request} and {@code update_from_output} are
 * the base class's, so with the sync {@code Scheduler} the placeholders stay 0 and the running loop's
 * "{@code num_output_placeholders > 0 and ...}" skip never fires.
 */
public enum SchedulerKind {
    /** {@code vllm/v1/core/sched/scheduler.py} {@code Scheduler}: {@code async_scheduling=False}. */
    SCHEDULER("Scheduler"),
    /** {@code vllm/v1/core/sched/async_scheduler.py} {@code AsyncScheduler}: {@code async_scheduling=True}, upstream's default. */
    ASYNC_SCHEDULER("AsyncScheduler");

    private final String upstreamClass;

    SchedulerKind(String upstreamClass) {
        this.upstreamClass = upstreamClass;
    }

    /** Whether placeholders are reserved and given back ({@code AsyncScheduler}'s two overrides). */
    public boolean reservesPlaceholders() {
        return this == ASYNC_SCHEDULER;
    }

    /**
     * {@code VllmConfig.max_concurrent_batches} at pipeline-parallel size 1 with the V1 model runner (vllm/config/vllm.py@000fc94b):
     * {@code if self.scheduler_config.async_scheduling: ... if pp_size <= 1: return 2}, else {@code return pp_size}. EngineCore
     * sizes its batch queue by it ({@code self.batch_queue_size = vllm_config.max_concurrent_batches}; {@code step} when it is 1).
     */
    public int maxConcurrentBatchesAtPp1() {
        return this == ASYNC_SCHEDULER ? 2 : 1;
    }

    /** The upstream class name. */
    public String upstreamClass() {
        return upstreamClass;
    }
}
