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
 * AbortedLoadFreesBlocks: an abort of a request in WAITING_FOR_REMOTE_KVS frees its blocks while the async load still
 * writes into them; another request gets them.
 *
 * <p><b>Upstream.</b> PR #32255 "[BugFix] scheduler: Delay freeing blocks of aborted async loads" (merged); lifecycle
 * §2(c)(iii). A request whose prompt KV is pulled from a remote prefill instance waits in WAITING_FOR_REMOTE_KVS,
 * holding the blocks the pull writes into. The decode-side NIXL connector never takes the blocks over
 * ({@code request_finished} returns False), so an ABORT used to free them at once while the pull still ran.
 *
 * <p><b>Set-up and actors.</b> A decode-side NIXL connector ({@link SavePolicy#NEVER}) and a pool of ONE block. R (its
 * 4-token prompt on a remote prefill instance) and R2 (local) were added and wait. Actor 1: the client's ABORT(R)
 * arrives. Actor 2: iteration 1 (schedule(1) allocates R's block B and starts the async load; R2 finds no block),
 * iteration 2 (schedule(2) gives R2 the block if it is free), then the worker: the load lands in B.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop + worker         arbiter
 *                                            1-3. schedule(1): R gets block B (the only one),
 *                                                 async load into B starts; R2 finds no block
 *   4. ABORT(R) -> input_queue, aborts_queue
 *                                            5. _process_input_queue: finish_requests(R)
 *                                               -> B freed (before #32255)
 *                                            6. schedule(2): R2 gets B
 *                                            7. update_from_output(2)
 *                                            8. worker: R's load lands in B -> R2's KV overwritten
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (SC4): a block that an in-flight load writes is not returned to the pool until
 * {@code finished_recving} of that load.
 *
 * <p><b>Verdicts.</b> Reported ({@code DELAY_FREE_ABORTED_LOAD} off): some interleaving shows
 * {@code LOAD_WROTE_FREED_BLOCK}. Fixed: never (the free waits for finished_recving(R)). vLLM main: closed, by #32255.
 */
public final class AbortedLoadFreesBlocksScenario extends SchedulerRaceScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("R aborted (before, during or after its load); B freed only once nothing writes it; R2 ran") ABORTED,
        @Violating(value = "R's async load landed in B after B was freed (and maybe reallocated to R2): SC4", detectors = {ViolationKind.WRITE_INTO_FREED_BLOCK}) LOAD_WROTE_FREED_BLOCK;
    }

    /** The scenario at one point of its family (see the race's grid). */
    public AbortedLoadFreesBlocksScenario(FixSet fixes, Configuration config, Params p) {
        this(fixes, config, p.get("promptBlocks", 1, 1), p);
    }

    /** R's prompt fills {@code blocks} blocks, and so does the pool: R2 gets them only if they are freed. */
    private AbortedLoadFreesBlocksScenario(FixSet fixes, Configuration config, int blocks, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.NEVER, blocks), p);
        rig.connector().remotePrefill(REQUEST_ID, 4 * blocks);
        rig.sendAdd(REQUEST_ID, 4 * blocks, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4 * blocks, 1);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        actors(rig.clientAbort(REQUEST_ID), rig.busyLoop().iteration().iteration().workerTransfersComplete().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.ABORTED).and(finished(REQUEST_ID, FINISHED_ABORTED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
