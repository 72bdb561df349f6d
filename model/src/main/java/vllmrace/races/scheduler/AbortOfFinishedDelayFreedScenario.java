package vllmrace.races.scheduler;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * AbortOfFinishedDelayFreed (#25067, reference §4 S1). A prefill-side NIXL connector: a normal finish is sent
 * to the decoder asynchronously ({@link SavePolicy#ON_SUCCESS}), an aborted request is freed at once. Set-up: R
 * (one output token) was added and its final step scheduled (step 1 in flight). Actor 1: the client's ABORT(R)
 * arrives (a client disconnect). Actor 2: the busy loop: update_from_output(1) finishes R by length, the
 * connector starts the send and R's blocks are delay-freed; the decoder's read completes; two more iterations
 * ship R in finished_req_ids, and finished_sending(R) frees R.
 *
 * <p>The race: the ABORT lands while R is finished but delay-freed. Without #25067 finish_requests does not skip
 * the finished R: _free_request runs again (SC1), request_finished now sees an aborted request and frees the
 * blocks at once, so the later finished_sending(R) finds no R (KeyError: EngineCore dies).
 */
public final class AbortOfFinishedDelayFreedScenario extends SchedulerRaceScenario {
    public static final String REQUEST_ID = "R";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("ABORT applied before update_from_output(1): R aborted and freed at once; its output is skipped") ABORTED,
        @Clean("ABORT applied while R is finished and delay-freed, or after: skipped; finished_sending frees R once") COMPLETED,
        @Violating("ABORT re-finished the delay-freed R: _free_request twice (SC1), blocks freed during the send, "
                + "finished_sending(R) finds R gone (KeyError, engine dead, unless seed 003's skip of late reports is on)") REFREED_THEN_KEYERROR,
        @Violating("any other violation or exception: a modelling error, never expected") UNEXPECTED;
    }

    public AbortOfFinishedDelayFreedScenario(FixSet fixes) {
        super(new EngineCoreRig(fixes, SavePolicy.ON_SUCCESS, 4));
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.runBusyLoopOnce(); // ADD applied; schedule(1) runs R's final step; the loop does not block yet
        rig.track(REQUEST_ID);
        actors(rig.clientAbort(REQUEST_ID),
                rig.busyLoop().iteration().workerTransfersComplete().iteration().iteration().build());
    }

    @Override
    public Outcome arbiter() {
        rig.runToQuiescence();
        if (rig.has(ViolationKind.DOUBLE_FREE_REQUEST)) {
            return Outcome.REFREED_THEN_KEYERROR;
        }
        return cleanEnding(REQUEST_ID, Outcome.ABORTED, Outcome.COMPLETED, Outcome.UNEXPECTED);
    }
}
