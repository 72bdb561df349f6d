package vllmrace.races.scheduler;

import java.util.List;
import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * AbortOfFinishedDelayFreed: an abort of an already-finished request that holds delay-freed blocks re-runs
 * _free_request; the later finished_sending hits a missing id.
 *
 * <p><b>Upstream.</b> PR #25067 "[NIXL] Ignore abort on already-finished request" (markmc, merged Oct 2025); lifecycle §4
 * S1. On a prefill (P) node the NIXL connector's {@code request_finished} returns True for a request that finished
 * normally: its blocks stay allocated, and the request stays in {@code Scheduler.requests}, finished, until the decoder
 * has read them ({@code finished_sending}). A client disconnect's ABORT for that request used to re-run
 * {@code _free_request} on it.
 *
 * <p><b>Set-up and actors.</b> A prefill-side NIXL connector: a normal finish is sent to the decoder asynchronously
 * ({@link SavePolicy#ON_SUCCESS}), an aborted request is freed at once. R (one output token) was added and its final
 * step scheduled (step 1 in flight). Actor 1: the client's ABORT(R) arrives. Actor 2: the busy loop: update_from_output(1)
 * finishes R by length, the connector starts the send and R's blocks are delay-freed; the decoder's read completes; two
 * more iterations ship R in finished_req_ids, and finished_sending(R) frees R.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop + worker         arbiter
 *                                            (set-up: schedule(1) ran R's final step)
 *                                            1-3. _process_input_queue, schedule(2),
 *                                                 update_from_output(1): R LENGTH_CAPPED
 *                                                 -> request_finished: send, delay the free
 *   4. ABORT(R) -> input_queue, aborts_queue
 *                                            5. worker: the decoder's read completes
 *                                            6. _process_input_queue: finish_requests(R)
 *                                               (before #25067: not skipped) -> _free_request AGAIN
 *                                               -> request_finished(ABORTED): free now, del requests[R]
 *                                            7-11. schedule(3) ships R in finished_req_ids;
 *                                                 update_from_output(3): finished_sending(R)
 *                                                 -> KeyError (engine dead)
 * </pre>
 *
 * <p>The reported and fixed variants have seed 003's proposed skip of late reports ON, so the final assert is logged and
 * skipped; the verdict reads the double {@code _free_request} (SC1) itself.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariants</b> (lifecycle §5): SC1 {@code _free_request} at most once; SC2 {@code _free_blocks} once; SC5 a
 * delay-freed request gets exactly one releasing event.
 *
 * <p><b>Verdicts.</b> Reported ({@code SKIP_ABORT_OF_FINISHED} off): some interleaving shows
 * {@code REFREED_THEN_KEYERROR}. Fixed: never. vLLM main: closed, by #25067.
 */
public final class AbortOfFinishedDelayFreedScenario extends SchedulerRaceScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("ABORT applied before update_from_output(1): R aborted and freed at once; its output is skipped") ABORTED,
        @Clean("ABORT applied while R is finished and delay-freed, or after: skipped; finished_sending frees R once") COMPLETED,
        @Violating(value = "ABORT re-finished the delay-freed R: _free_request twice (SC1), blocks freed during the send, "
                + "finished_sending(R) finds R gone (KeyError, engine dead, unless seed 003's skip of late reports is on)", detectors = {ViolationKind.DOUBLE_FREE_REQUEST},
                cascade = {ViolationKind.LATE_TRANSFER_REPORT},
                cascadeWhy = "the second free deletes the request, so its save's finished_sending finds no request") REFREED_THEN_KEYERROR;
    }

    /** The scenario at one point of its family (see the race's grid). */
    public AbortOfFinishedDelayFreedScenario(FixSet fixes, Configuration config, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.ON_SUCCESS, 4), p);
        sendFamily(REQUEST_ID, p);
        rig.dispatchStep(); // ADD applied; schedule(1) runs R's final step, in flight
        rig.track(REQUEST_ID);
        actors(rig.clientAbort(REQUEST_ID),
                rig.busyLoop().finishStepInFlight().iteration().workerTransfersComplete().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.ABORTED).and(finished(REQUEST_ID, FINISHED_ABORTED)),
                ending(Outcome.COMPLETED).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED, FINISHED_STOPPED)));
    }
}
