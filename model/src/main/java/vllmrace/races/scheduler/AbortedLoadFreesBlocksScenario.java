package vllmrace.races.scheduler;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * AbortedLoadFreesBlocks (#32255, reference §2(c)(iii)). A decode-side NIXL connector ({@link SavePolicy#NEVER}:
 * it never takes over blocks, even with a pull in flight). A pool of ONE block. Set-up: R (its 4-token prompt
 * on a remote prefill instance) and R2 (local) were added and wait. Actor 1: the client's ABORT(R) arrives.
 * Actor 2: iteration 1 (schedule(1) allocates R's block B and starts the async load; R2 finds no block),
 * iteration 2 (schedule(2) gives R2 the block if it is free), then the worker: the load lands in B.
 *
 * <p>The race: the ABORT is applied while R is WAITING_FOR_REMOTE_KVS. Without #32255, finish_requests frees B at
 * once; R2 gets B, and R's still-running load overwrites R2's KV (or lands in a free block): SC4. With #32255, the
 * free is delayed until finished_recving(R), after the load has landed.
 */
public final class AbortedLoadFreesBlocksScenario extends SchedulerRaceScenario {
    public static final String REQUEST_ID = "R";
    public static final String OTHER_REQUEST_ID = "R2";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("R aborted (before, during or after its load); B freed only once nothing writes it; R2 ran") ABORTED,
        @Violating("R's async load landed in B after B was freed (and maybe reallocated to R2): SC4") LOAD_WROTE_FREED_BLOCK,
        @Violating("any other violation or exception: a modelling error, never expected") UNEXPECTED;
    }

    public AbortedLoadFreesBlocksScenario(FixSet fixes) {
        super(new EngineCoreRig(fixes, SavePolicy.NEVER, 1));
        rig.connector().remotePrefill(REQUEST_ID, 4);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4, 1);
        rig.engineCore().processInputQueue();
        rig.track(REQUEST_ID);
        rig.track(OTHER_REQUEST_ID);
        actors(rig.clientAbort(REQUEST_ID), rig.busyLoop().iteration().iteration().workerTransfersComplete().build());
    }

    @Override
    public Outcome arbiter() {
        rig.runToQuiescence();
        if (rig.has(ViolationKind.WRITE_INTO_FREED_BLOCK)) {
            return Outcome.LOAD_WROTE_FREED_BLOCK;
        }
        if (!rig.violations().isEmpty() || actorFailed() || !rig.allFreed()) {
            return Outcome.UNEXPECTED;
        }
        if (rig.request(REQUEST_ID).status() == RequestStatus.FINISHED_ABORTED
                && rig.request(OTHER_REQUEST_ID).status() == RequestStatus.FINISHED_LENGTH_CAPPED) {
            return Outcome.ABORTED;
        }
        return Outcome.UNEXPECTED;
    }
}
