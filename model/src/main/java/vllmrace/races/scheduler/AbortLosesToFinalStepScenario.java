package vllmrace.races.scheduler;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * AbortLosesToFinalStep (#29987, fixes #26400; reference §2(c)(ii)). A prefill-side NIXL connector
 * ({@link SavePolicy#ON_SUCCESS}: a normal finish pins the blocks for the decoder, an abort frees them). Set-up:
 * R (one output token) was added and its final step scheduled (step 1 in flight). Actor 1: the client's
 * ABORT(R) arrives. Actor 2: one busy-loop iteration: {@code _process_input_queue}, schedule(2),
 * update_from_output(1).
 *
 * <p>The race: the ABORT lands after the iteration's input-queue pass. Without #29987 it waits in
 * {@code input_queue}; update_from_output(1) finishes R by length, the connector sees a success and pins the
 * blocks for a decode that will never come, and the ABORT, applied next iteration, skips the finished R.
 * With #29987 the input thread also queues it in {@code aborts_queue}, applied just before update_from_output.
 */
public final class AbortLosesToFinalStepScenario extends SchedulerRaceScenario {
    public static final String REQUEST_ID = "R";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("ABORT received before update_from_output(1) and applied first: R aborted, blocks freed, no success reported") ABORTED,
        @Clean("ABORT received after update_from_output(1): R had finished by length; the ABORT is a no-op") COMPLETED,
        @Violating("ABORT received before update_from_output(1) but applied after it: R completes as a success, "
                + "the connector pins its blocks for a decode that never comes") ABORT_OVERTAKEN,
        @Violating("any other violation or exception: a modelling error, never expected") UNEXPECTED;
    }

    public AbortLosesToFinalStepScenario(FixSet fixes) {
        super(new EngineCoreRig(fixes, SavePolicy.ON_SUCCESS, 4));
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.runBusyLoopOnce(); // ADD applied; schedule(1) runs R's final step; the loop does not block yet
        rig.track(REQUEST_ID);
        actors(rig.clientAbort(REQUEST_ID), rig.busyLoop().iteration().build());
    }

    @Override
    public Outcome arbiter() {
        rig.runToQuiescence();
        if (rig.has(ViolationKind.ABORT_OVERTAKEN_BY_COMPLETION)) {
            return Outcome.ABORT_OVERTAKEN;
        }
        return cleanEnding(REQUEST_ID, Outcome.ABORTED, Outcome.COMPLETED, Outcome.UNEXPECTED);
    }
}
