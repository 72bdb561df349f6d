package vllmrace.races.scheduler;

import java.util.List;
import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * PreemptedInFinalStepEmptyBlocks: on the prefill side, a request preempted while its final step is in flight still
 * finishes normally when that step's output returns; its blocks were freed by the preemption, so the connector's
 * {@code request_finished} gets an empty block list and the decode side never receives the KV.
 *
 * <p><b>Upstream.</b> PR #50297 "[BugFix] Fix P/D preemption race condition" (njhill, merged; replaces #48141, built on
 * #48245): "a prefill request can be preempted during it's final (possible only) step. The scheduler logic currently
 * allows such requests to complete normally ... However at this point, their kv blocks have been purged and so async
 * kv-consuming connectors (prefill side) will see an empty list of blocks when their {@code request_finished()} is
 * called." Before it (scheduler.py@00024d31) {@code _preempt_request} frees the blocks at once and calls no connector
 * hook, and {@code update_from_output} applies a PREEMPTED request's in-flight output (PREEMPTED is not finished), so
 * {@code check_stop} finishes it and {@code _connector_finished} passes {@code get_block_ids(R) == []}. #48245 alone marks
 * that output stale but still delivers it (lossless). #50297 adds {@code KVConnectorBase_V1.requires_kv_delivery} (the
 * producer role) and preempts with {@code drop_stale_output=self.requires_kv_delivery}: the final token is dropped, R stays
 * PREEMPTED in waiting and is recomputed into fresh blocks.
 *
 * <p><b>Set-up and actors.</b> A prefill-side NIXL connector ({@link SavePolicy#ON_SUCCESS}, a KV producer), async
 * scheduling (batch queue 2), a pool holding exactly C, A and R (one block each at the default point). C (2-token prompt,
 * max_tokens 2), A (4-token prompt, max_tokens 2) and R (4-token prompt, max_tokens 1) were admitted in that order and
 * schedule(1) ran all three: R's only, final step is in flight; A's decode token needs a second block. Actor 1: the
 * client's ABORT(C) reaches the input thread. Actor 2: one busy-loop iteration: {@code _process_input_queue},
 * schedule(2), update_from_output(1).
 *
 * <pre>
 *   actor 1: client ABORT(C)                 actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: schedule(1) ran C, A and R's final step)
 *                                            1. _process_input_queue: nothing to apply yet
 *   2. ABORT(C) -> input_queue (too late
 *      to free C's block for schedule(2))
 *                                            3. schedule(2): A's decode needs a block, none free:
 *                                               preempt running.pop() = R: R's block back to the
 *                                               pool, R PREEMPTED at the front of waiting
 *                                            4. update_from_output(1): R's token is applied,
 *                                               check_stop: LENGTH_CAPPED -> request_finished(R, [])
 *                                                                                          5. the hand-off carried no
 *                                                                                             blocks: nothing is sent
 * </pre>
 *
 * <p><b>Scheduler.</b> AsyncScheduler only (#50297: "P/D and async scheduling"): with one batch in flight R's final
 * step is processed before the next {@code schedule()} can preempt it, so every interleaving is clean with the sync
 * {@code Scheduler}. vLLM main, sync scheduling: does not occur.
 *
 * <p><b>Invariant</b> (CN3): a KV producer's {@code request_finished} for a normally finished request that computed KV
 * carries the blocks holding that KV.
 *
 * <p><b>Window.</b> The order of two events: the ABORT reaching EngineCore before the {@code _process_input_queue} of the
 * iteration whose schedule() needs C's block (applied before schedule(2), it frees that block and nothing is preempted), or
 * after it. At {@code stopToken} 1 (max_tokens 2) R's own decode step needs a block too, so R preempts itself in every
 * order.
 *
 * <p><b>Verdicts.</b> Reported ({@code REQUIRES_KV_DELIVERY} off; #48245's stale marking on, which delivers the stale
 * output): an ABORT after step 1 shows {@code EMPTY_HANDOFF}. Fixed (the stale final token is dropped; R is recomputed and
 * hands off its new blocks): never. vLLM main: closed, by #50297.
 */
public final class PreemptedInFinalStepEmptyBlocksScenario extends SchedulerRaceScenario {
    public static final String PRESSURE = "A";
    public static final String ABORTED = "C";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("R finished normally and request_finished handed its blocks to the connector (R was not preempted, or was "
                + "recomputed after its stale final token was dropped); C aborted, A completed, everything freed") HANDED_OFF,
        @Violating(value = "R was preempted in its final step and still finished normally: request_finished(R, []) hands the "
                + "decoder no blocks (CN3)", detectors = {ViolationKind.EMPTY_KV_HANDOFF}) EMPTY_HANDOFF;
    }

    /**
     * The scenario at one point of its family: {@code promptBlocks} (A's and R's prompts in blocks, default 1; the pool
     * grows with them), {@code stopToken} (1: R's first output token is a stop token, max_tokens 2, FINISHED_STOPPED).
     */
    public PreemptedInFinalStepEmptyBlocksScenario(FixSet fixes, Configuration config, Params p) {
        this(fixes, config, p.get("promptBlocks", 1, 1), p.get("stopToken", 0, 0) == 1, p);
    }

    private PreemptedInFinalStepEmptyBlocksScenario(FixSet fixes, Configuration config, int blocks, boolean stop, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.ON_SUCCESS, 1 + 2 * blocks), p);
        int bs = EngineCoreRig.BLOCK_SIZE;
        rig.sendAdd(ABORTED, 2, 2);
        rig.sendAdd(PRESSURE, blocks * bs, 2);
        rig.sendAdd(REQUEST_ID, blocks * bs, stop ? 2 : 1, stop ? 1 : 0);
        rig.dispatchStep(); // ADDs applied; schedule(1) runs C, A and R's final step, in flight
        rig.trackAll(ABORTED, PRESSURE, REQUEST_ID);
        requireSetUp(rig.blockPool().numFreeBlocks() == 0 && rig.scheduler().runningSnapshot().size() == 3,
                "C, A and R were expected running in a full pool, free " + rig.blockPool().numFreeBlocks() + ", running "
                        + rig.scheduler().runningSnapshot());
        actors(rig.clientAbort(ABORTED), rig.busyLoop().finishStepInFlight().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        // with one batch in flight C may finish before its ABORT lands
        return List.of(ending(Outcome.HANDED_OFF).and(finished(ABORTED, FINISHED_ABORTED, FINISHED_LENGTH_CAPPED),
                finished(PRESSURE, FINISHED_LENGTH_CAPPED), finished(REQUEST_ID, FINISHED_LENGTH_CAPPED, FINISHED_STOPPED)));
    }
}
