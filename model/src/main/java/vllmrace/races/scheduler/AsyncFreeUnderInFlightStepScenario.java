package vllmrace.races.scheduler;

import java.util.List;
import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.TransferTarget;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * AsyncFreeUnderInFlightStep: under async scheduling, update_from_output(N) stops R and returns its blocks at once while
 * step N+1, which scheduled R again, is still writing them; a remote-prefill request is given those blocks and its
 * NIC write fills them; step N+1's stale device write lands after it and corrupts that request's KV.
 *
 * <p><b>Upstream.</b> PR #45357 "[Bugfix] Defer block freeing until in-flight steps finish under async scheduling + PD
 * KV consumer" (llx-08, merged Jun 2026; the same gap open in vllm-ascend #14055). Before it (scheduler.py@00024d31)
 * {@code _free_blocks} calls {@code kv_cache_manager.free(request)} at once; the PR keeps "request bookkeeping cleanup
 * immediate, but defers the ref-count decrement / block-pool return until {@code update_from_output()} observes that the
 * fence step's output has been processed" ({@code _free_request_blocks}, {@code _drain_deferred_frees},
 * {@code sched_step_seq}, {@code processed_step_seq}). "The NIC/RDMA write that fills the new request's KV is not
 * ordered with respect to the stale in-flight GPU write"; an ordinary reallocation is safe (same CUDA stream).
 *
 * <p><b>Set-up and actors.</b> A decode-side (KV consumer) connector; a pool of one block. R (3 prompt tokens; its first
 * sampled token is a stop token) holds the block; R2's prompt is on a remote instance and waits for a block. schedule(1)
 * ran R's prefill and schedule(2) R's next decode token: step 2 is in flight and will write R's KV slot into the block.
 * Actor 1: the device: step 2's forward writes R's KV. Actor 2: the busy loop: update_from_output(1), an iteration, the
 * NIC write of R2's load lands.
 *
 * <pre>
 *   actor 1: device (step 2 in flight)       actor 2: EngineCore busy loop + NIC            arbiter
 *                                            1. update_from_output(1): R samples its stop token
 *                                               -> _free_blocks: block 0 back to the pool at once
 *                                            2-4. schedule(3): R2's async load gets block 0
 *                                            5. NIC: R2's KV lands in block 0
 *   6. step 2's forward writes R's KV slot
 *      into block 0: R2's KV corrupted
 *                                                                                          7. update_from_output(2) ...
 * </pre>
 *
 * <p><b>Scheduler.</b> AsyncScheduler only: it needs step N+1 in flight while {@code update_from_output(N)} frees the
 * blocks. With the sync {@code Scheduler} (one batch in flight) the set-up state does not exist, and #45357 does not
 * defer ({@code max_concurrent_batches} is 1). vLLM main, sync scheduling: does not occur.
 *
 * <p><b>Invariant</b> (SC4): a block does not return to the free queue while a dispatched, unprocessed step can still
 * write it.
 *
 * <p><b>Window.</b> The order of two device events: step 2's write landing before R2's NIC write (harmless: the load
 * overwrites it) or after it.
 *
 * <p><b>Verdicts.</b> Reported ({@code DEFER_BLOCK_FREE} off): the late device write shows {@code CORRUPTED}. Fixed (the
 * block returns only once step 2 is processed; R2 waits for it): never. vLLM main: closed, by #45357.
 */
public final class AsyncFreeUnderInFlightStepScenario extends SchedulerRaceScenario {
    public static final String LOADING = "R2";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("R stopped; R2 got the block, loaded its KV and ran; no stale write landed on R2's KV") CLEAN,
        @Violating(value = "step 2's stale device write for R landed in the block after R2's NIC write had filled it: R2's KV is "
                + "corrupted (SC4)", detectors = {ViolationKind.STALE_STEP_WRITE_INTO_REUSED_BLOCK}) CORRUPTED;
    }

    /** The scenario at one point of its family: {@code maxTokens} of R (default 3; R stops at its first token). */
    public AsyncFreeUnderInFlightStepScenario(FixSet fixes, Configuration config, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.NEVER, 1), p);
        int bs = EngineCoreRig.BLOCK_SIZE;
        rig.sendAdd(REQUEST_ID, bs - 1, p.get("maxTokens", 3, 2), 1);
        rig.connector().remotePrefill(LOADING, bs);
        rig.sendAdd(LOADING, bs, 1);
        rig.admit(REQUEST_ID, LOADING);
        requireSetUp(!rig.engineCore().scheduleBatch() && rig.engineCore().scheduleBatch(),
                "schedule(1) must not block and schedule(2) must fill the batch queue");
        TransferTarget step2Write = rig.kvCacheManager().beginTransfer(REQUEST_ID); // step 2's kernel writes R's blocks
        requireSetUp(!step2Write.slots().isEmpty() && rig.engineCore().batchQueueSnapshot().get(0).numScheduledTokens().containsKey(REQUEST_ID),
                "step 2 was expected to schedule R in its block");
        actors(rig.event("device", "GPU: step 2's forward writes R's KV slot", () -> rig.kvCacheManager().completeDeviceWrite(step2Write)),
                rig.busyLoop().processOldestBatch().iteration().workerTransfersComplete().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.CLEAN).and(finished(REQUEST_ID, FINISHED_STOPPED), finished(LOADING, FINISHED_LENGTH_CAPPED)));
    }
}
