package vllmrace.races.scheduler;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * DoubleFreeOnAbortedAsyncSave (#33377, seed 000). A connector that async-saves every finished request, aborted
 * ones included (LMCache; {@link SavePolicy#ALWAYS}). Set-up: R (one output token) was added and waits.
 * Actor 1: the client's ABORT(R) arrives. Actor 2: two busy-loop iterations with async scheduling: schedule(1)
 * runs R's final step; schedule(2) runs ahead; update_from_output(1) processes it. Arbiter: the saves complete,
 * the busy loop runs to quiescence.
 *
 * <p>The race: the ABORT lands after schedule(1), so it is applied (at the next input-queue pass, or by
 * #29987's eager pass) before update_from_output(1). finish_requests → _free_request → request_finished → the
 * connector saves and R stays in {@code requests}, finished. Without #33377's {@code is_finished()} guard,
 * update_from_output(1) appends R's token, the stop check fires, and _free_request runs again: a second
 * request_finished, a second save, and its finished_sending finds R gone (assert, EngineCore dies).
 */
public final class DoubleFreeOnAbortedAsyncSaveScenario extends SchedulerRaceScenario {
    public static final String REQUEST_ID = "R";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("ABORT applied first (before schedule(1), or between schedule(1) and update_from_output(1)): "
                + "R aborted, request_finished once, blocks freed once") ABORTED,
        @Clean("update_from_output(1) ran first: R finished by length, saved once, freed once; the late ABORT is a no-op") COMPLETED,
        @Violating("update_from_output(1) processed R after its abort: token appended to a finished request (SC3), "
                + "_free_request and request_finished twice (SC1), the second finished_sending finds R gone (engine dead, "
                + "unless seed 003's skip of late reports is on)") FREED_TWICE,
        @Violating("any other violation or exception: a modelling error, never expected") UNEXPECTED;
    }

    public DoubleFreeOnAbortedAsyncSaveScenario(FixSet fixes) {
        super(new EngineCoreRig(fixes, SavePolicy.ALWAYS, 4));
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.engineCore().processInputQueue();
        rig.track(REQUEST_ID);
        actors(rig.clientAbort(REQUEST_ID), rig.busyLoop().iteration().iteration().build());
    }

    @Override
    public Outcome arbiter() {
        rig.runToQuiescence();
        if (rig.has(ViolationKind.DOUBLE_FREE_REQUEST)) {
            return Outcome.FREED_TWICE;
        }
        return cleanEnding(REQUEST_ID, Outcome.ABORTED, Outcome.COMPLETED, Outcome.UNEXPECTED);
    }
}
