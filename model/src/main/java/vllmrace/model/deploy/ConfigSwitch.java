package vllmrace.model.deploy;

import java.util.Objects;
import vllmrace.model.fix.Fix;

/**
 * A deployment's configuration, where it departs from upstream's default: an environment variable, a config value or
 * which connector implementation a child of the MultiConnector is. A configuration switch is not a fix: it changes no
 * upstream code, it chooses a code path that a fix may not reach. Each names the merged fix whose code path it takes
 * away ({@link #takesAway()}), which is what the registry's per-profile expectation reads; the model reads the switch
 * itself at the one place the path differs, and the computed verdict checks the two agree. {@link #SYNC_SCHEDULING} takes
 * no fix away: it chooses the scheduler class and so how many steps are in flight.
 */
public enum ConfigSwitch {
    /**
     * {@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1} (#34415, merged): {@code InputProcessor.assign_request_id} keeps
     * the client's id as the engine's, so #27987's suffix is not added and EngineCore sees a reused id again.
     */
    REQUEST_ID_RANDOMIZATION_DISABLED(
            "VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1",
            "#34415 (merged, 'temporary, off by default') added it for the P/D connectors that match requests across "
                    + "instances by id (P2P NCCL, MoRIIO, Mooncake); #45688 (open) would set it for detected P/D deployments",
            "vllm/v1/engine/input_processor.py@009daaee InputProcessor.assign_request_id: if "
                    + "envs.VLLM_DISABLE_REQUEST_ID_RANDOMIZATION: (warning) else: request.request_id = "
                    + "f\"{request.external_req_id}-{random_uuid():.8}\"",
            Fix.UNIQUE_INTERNAL_IDS),
    /**
     * The MultiConnector's LMCache child is LMCache's own MP connector (out of tree, from the LMCache package), which
     * starts a retrieve whenever it has a hit, whatever {@code num_external_tokens} its {@code update_state_after_alloc}
     * is given: the contract #46865 relies on ("0 external tokens: do not load") is broken. LMCache's versions without
     * the guard (LMCache@5edba3af) do this; #4028 (open) adds it to the older variants. vllm-ascend's MultiConnector has the
     * same hazard once it ports #46865 (its #13668, open).
     */
    OUT_OF_TREE_LMCACHE_MP(
            "LMCache's own MP connector as the LMCache child",
            "LMCache's own lmcache/integration/vllm/lmcache_mp_connector.py: without the guard at LMCache@5edba3af, with it "
                    + "at LMCache@0039822b; #4028 (open) adds it to the older variants, #4355 closed",
            "LMCache@5edba3af lmcache_mp_connector.py update_state_after_alloc: condition = tracker.needs_retrieve() (the "
                    + "in-tree copy after #47505: condition = tracker.needs_retrieve() and num_external_tokens > 0)",
            Fix.LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN),
    /**
     * {@code async_scheduling=False} at pipeline-parallel size 1: EngineCore runs the sync {@code Scheduler} with one batch
     * in flight ({@code max_concurrent_batches} 1, so {@code step}, not {@code step_with_batch_queue}). Upstream turns async
     * scheduling off by itself for pipeline parallelism, a non-EAGLE speculative method, a disabled padded drafter or an
     * executor without async support, and on request ({@code --no-async-scheduling}); pipeline parallelism keeps several
     * batches in flight and is not this switch. It takes no fix's code path away: with one batch in flight, the races that
     * need a step in flight while the scheduler acts on an earlier one cannot happen ({@code Race.needsOverlappingBatches}).
     */
    SYNC_SCHEDULING(
            "async_scheduling=False (--no-async-scheduling), pipeline-parallel size 1",
            "the default is async since vllm/config/vllm.py@09f030ea VllmConfig.__post_init__ (async_scheduling = True "
                    + "unless PP > 1, a non-EAGLE speculative method, padded drafter disabled or an executor without async support)",
            "vllm/config/scheduler.py@01230b40 get_scheduler_cls: if self.async_scheduling: return AsyncScheduler ... return "
                    + "Scheduler; vllm/v1/engine/core.py@00080ee1: self.batch_queue_size = vllm_config.max_concurrent_batches; "
                    + "self.step_fn = self.step if self.batch_queue is None else self.step_with_batch_queue",
            null);

    private final String setting;
    private final String provenance;
    private final String evidence;
    private final Fix takesAway;

    ConfigSwitch(String setting, String provenance, String evidence, Fix takesAway) {
        this.setting = setting;
        this.provenance = provenance;
        this.evidence = evidence;
        this.takesAway = takesAway;
    }

    /** How a deployment sets it (an environment variable, a config value, a package). */
    public String setting() {
        return setting;
    }

    /** Where it comes from upstream: the PRs that add it, advise it or would remove its hazard, with their state. */
    public String provenance() {
        return provenance;
    }

    /** The upstream line that shows the code path it chooses. */
    public String evidence() {
        return evidence;
    }

    /** The merged fix whose code path this switch takes away (with it ON the fix has no effect), if any. */
    public java.util.Optional<Fix> takesAway() {
        return java.util.Optional.ofNullable(takesAway);
    }

    /** The scheduler class a deployment with this switch ON runs, where the switch decides it. */
    public boolean selectsSyncScheduler() {
        return this == SYNC_SCHEDULING;
    }
}
