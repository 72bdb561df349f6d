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
 * AbortLosesToFinalStep: an abort arriving during a request's final step is overtaken by normal completion; the
 * connector treats it as a success and pins its blocks.
 *
 * <p><b>Upstream.</b> PR #29987 "[BugFix] Eagerly abort cancelled final-step requests" (njhill, merged, fixes #26400);
 * lifecycle §2(c)(ii). "When requests are cancelled while executing their final step, 'completion' is subsequently
 * handled based on normal stop processing, and so the abort essentially has no effect." On a prefill node the connector
 * then keeps the blocks for a decode that never comes, until a timeout.
 *
 * <p><b>Set-up and actors.</b> A prefill-side NIXL connector ({@link SavePolicy#ON_SUCCESS}: a normal finish pins the
 * blocks for the decoder, an abort frees them). R (one output token) was added and its final step scheduled (step 1 in
 * flight). Actor 1: the client's ABORT(R) arrives. Actor 2: one busy-loop iteration: {@code _process_input_queue},
 * schedule(2), update_from_output(1). With #29987 the input thread also queues the ABORT in {@code aborts_queue},
 * applied just before update_from_output.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: schedule(1) ran R's final step)
 *                                            1. _process_input_queue
 *   2. ABORT(R) -> input_queue (only)
 *                                            3. schedule(2)
 *                                            4. update_from_output(1): R LENGTH_CAPPED
 *                                               -> request_finished: success, blocks pinned
 *                                                                                          5. ABORT(R) applied: skipped
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (#29987): an abort received before the output of the in-flight step is processed takes precedence
 * over normal completion.
 *
 * <p><b>Verdicts.</b> Reported ({@code EAGER_ABORTS} off): some interleaving shows {@code ABORT_OVERTAKEN}. Fixed: never.
 * vLLM main: closed, by #29987.
 */
public final class AbortLosesToFinalStepScenario extends SchedulerRaceScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("ABORT received before update_from_output(1) and applied first: R aborted, blocks freed, no success reported") ABORTED,
        @Clean("ABORT received after update_from_output(1): R had finished by length; the ABORT is a no-op") COMPLETED,
        @Violating(value = "ABORT received before update_from_output(1) but applied after it: R completes as a success, "
                + "the connector pins its blocks for a decode that never comes", detectors = {ViolationKind.ABORT_OVERTAKEN_BY_COMPLETION}) ABORT_OVERTAKEN;
    }

    /** The scenario at one point of its family (see the race's grid). */
    public AbortLosesToFinalStepScenario(FixSet fixes, Configuration config, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.ON_SUCCESS, 4), p);
        sendFamily(REQUEST_ID, p);
        rig.dispatchStep(); // ADD applied; schedule(1) runs R's final step, in flight
        rig.track(REQUEST_ID);
        actors(rig.clientAbort(REQUEST_ID), rig.busyLoop().finishStepInFlight().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.ABORTED).and(finished(REQUEST_ID, FINISHED_ABORTED)),
                ending(Outcome.COMPLETED).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED, FINISHED_STOPPED)));
    }
}
