package vllmrace.races.scheduler;

import java.util.List;
import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.SchedulerKind;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * StoreReadsPreemptedBlocks: an async store job reads R's blocks after the step that emitted it; the next schedule()
 * preempts R, whose blocks go back without request_finished; another request is given them and writes them; the job
 * stores that request's KV under R's key.
 *
 * <p><b>Upstream.</b> #52360 "[Bug][MooncakeStoreConnector]: Preemption frees GPU blocks while async store jobs are still
 * reading them, storing KV that does not belong to the key" (closed), fixed by PR #52372 (merged Aug 2026; also fixes the
 * ABA twin #51637): "the only existing protection is {@code request_finished} → {@code delay_free_blocks}, which covers
 * the normal-completion path only. Preemption takes a different path". #52372 takes a block reference per store job in
 * {@code build_connector_meta} ({@code _reference_save_blocks}: {@code pool.touch}) and frees it when every rank reported
 * the job done. The same pattern is open in LMCache (#4955, #5248). #45357's fence does not cover it: the read happens
 * after the step's output is processed.
 *
 * <p><b>Set-up and actors.</b> A store connector (a KV consumer, so #45357's deferred frees apply); a pool of 2 blocks. A
 * (4-token prompt, max_tokens 3) and R (4-token prompt, one token) were admitted and schedule(1) ran both;
 * {@code build_connector_meta} emitted R's store job, which reads R's block on a background thread. Actor 1: the store
 * thread reads R's block and PUTs it under R's key. Actor 2: three busy-loop iterations: A's decode needs a second block,
 * schedule(2) preempts R (the tail of running) and, once R's block is back, A is given it and writes it.
 *
 * <pre>
 *   actor 1: store thread                    actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: schedule(1) ran A and R; R's store job
 *                                             was emitted for R's block)
 *                                            1-6. schedule(2): A needs a block: _preempt_request(R)
 *                                                 -> kv_cache_manager.free(R), no request_finished;
 *                                                 update_from_output(1); A is given R's block
 *   7. the store job reads R's block: A's KV
 *      is PUT under R's key (SC4)
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the store job reads on its own thread, not in a batch. With the sync
 * {@code Scheduler} (one batch in flight) schedule(1)'s output is processed in the set-up, and R has max_tokens 2 so it
 * still runs when schedule(2) preempts it.
 *
 * <p><b>Invariant</b> (SC4): a block an outstanding reader needs keeps {@code ref_cnt >= 1}, whatever happens to the
 * request (finish, preemption, abort).
 *
 * <p><b>Window.</b> The order of two events: the store thread reading before the preemption frees the block (clean) or
 * after the block went to A.
 *
 * <p><b>Verdicts.</b> Reported ({@code STORE_JOB_BLOCK_REF} off): the late read shows {@code FOREIGN_KV_STORED}. Fixed (the
 * job's reference keeps the block out of the free queue until the read is done): never. vLLM main: closed, by #52372 (for
 * MooncakeStoreConnector; connectors without it, such as LMCache's, are not modelled here).
 */
public final class StoreReadsPreemptedBlocksScenario extends SchedulerRaceScenario {
    public static final String GROWING = "A";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("R's store job read R's own KV; the preemption and A's growth came before or after without touching it") STORED_OWN_KV,
        @Violating(value = "the store job read R's block after the preemption freed it and A was given it: A's KV is stored under R's "
                + "key, served on every later prefix hit (SC4)", detectors = {ViolationKind.STORE_READ_OF_FREED_BLOCK}) FOREIGN_KV_STORED;
    }

    /** The scenario at one point of its family: {@code maxTokens} of A (default 3). */
    public StoreReadsPreemptedBlocksScenario(FixSet fixes, Configuration config, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.NEVER, 2), p);
        boolean sync = config.schedulerKind() == SchedulerKind.SCHEDULER;
        rig.connector().storeWhileRunning(REQUEST_ID);
        rig.sendAdd(GROWING, EngineCoreRig.BLOCK_SIZE, p.get("maxTokens", 3, 2));
        // sync: schedule(1)'s output is processed before schedule(2), so R needs a second token to still run there
        rig.sendAdd(REQUEST_ID, EngineCoreRig.BLOCK_SIZE, sync ? 2 : 1);
        rig.admit(GROWING, REQUEST_ID);
        requireSetUp(rig.engineCore().scheduleBatch() == sync && rig.connector().hasPendingTransfer(REQUEST_ID),
                "schedule(1) must run A and R and emit R's store job" + (sync ? " (one batch in flight: the queue is full)" : " without blocking"));
        if (sync) {
            rig.engineCore().processOldestBatch(); // EngineCore.step: update_from_output(1) before the next schedule
        }
        actors(rig.event("store thread", "KVCacheStoreSendingThread: R's store job reads its blocks and PUTs them under R's key",
                        () -> rig.connector().completeStore(REQUEST_ID)),
                rig.busyLoop().iteration().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.STORED_OWN_KV).and(finished(GROWING, FINISHED_LENGTH_CAPPED), finished(REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
