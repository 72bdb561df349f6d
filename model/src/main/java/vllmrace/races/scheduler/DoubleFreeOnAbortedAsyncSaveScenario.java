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
 * DoubleFreeOnAbortedAsyncSave: async scheduling, an abort between schedule and update_from_output, and a connector
 * delaying the free: the finished request is processed again and freed twice.
 *
 * <p><b>Upstream.</b> PR #33377 (KuntaiDu, merged), seed 000. With async scheduling (a batch queue of 2)
 * {@code schedule()} for step N+1 runs before {@code update_from_output} for step N, and an ABORT is applied in between:
 * at the next input-queue pass, and since #29987 also right before {@code update_from_output}. A connector that
 * async-saves finished requests (aborted ones included; LMCache) makes {@code request_finished} return True, so the
 * aborted request stays in {@code Scheduler.requests}, finished, until its save completes. Before #33377
 * {@code update_from_output} only skipped {@code request is None}.
 *
 * <p><b>Set-up and actors.</b> A connector that async-saves every finished request ({@link SavePolicy#ALWAYS}). R (one
 * output token) was added and waits. Actor 1: the client's ABORT(R) arrives. Actor 2: two busy-loop iterations with async
 * scheduling: schedule(1) runs R's final step; schedule(2) runs ahead; update_from_output(1) processes it. Arbiter: the
 * saves complete, the busy loop runs to quiescence.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop                 arbiter
 *                                            1. _process_input_queue
 *                                            2. schedule(1): R's final step
 *   3. ABORT(R) -> input_queue, aborts_queue
 *                                            4. _process_input_queue: finish_requests(R)
 *                                               -> _free_request -> request_finished: save, delay
 *                                            5. schedule(2)
 *                                            6. update_from_output(1): R is finished but present
 *                                               -> token appended, check_stop -> _free_request AGAIN
 *                                                                                          7. two saves complete:
 *                                                                                             finished_sending(R) x2
 *                                                                                             -> 2nd: assert fails
 * </pre>
 *
 * <p>The reported and fixed variants have seed 003's proposed skip of late reports ON, so the final assert is logged and
 * skipped; the verdict reads the double {@code _free_request} (SC1) itself. On vLLM main (no skip) the engine dies.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariants</b> (lifecycle §5): SC1 {@code _free_request} / {@code request_finished} at most once per request, SC2
 * {@code _free_blocks} once, SC3 no model output applied to a finished request.
 *
 * <p><b>Verdicts.</b> Reported ({@code IS_FINISHED_GUARD} off): some interleaving shows {@code FREED_TWICE}. Fixed: never.
 * vLLM main: closed, by #33377.
 */
public final class DoubleFreeOnAbortedAsyncSaveScenario extends SchedulerRaceScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("ABORT applied first (before schedule(1), or between schedule(1) and update_from_output(1)): "
                + "R aborted, request_finished once, blocks freed once") ABORTED,
        @Clean("update_from_output(1) ran first: R finished by length, saved once, freed once; the late ABORT is a no-op") COMPLETED,
        @Violating(value = "update_from_output(1) processed R after its abort: token appended to a finished request (SC3), "
                + "_free_request and request_finished twice (SC1), the second finished_sending finds R gone (engine dead, "
                + "unless seed 003's skip of late reports is on)", detectors = {ViolationKind.DOUBLE_FREE_REQUEST},
                cascade = {ViolationKind.OUTPUT_FOR_FINISHED_REQUEST, ViolationKind.LATE_TRANSFER_REPORT},
                cascadeWhy = "the aborted request's in-flight output is applied before its second free (#33377's guard is off with "
                        + "it); without seed 003's late-report skip its save's finished_sending then finds no request") FREED_TWICE,
        @Violating(value = "update_from_output(1) appended R's token after its abort (SC3); R had tokens to go, so no second "
                + "_free_request yet", detectors = {ViolationKind.OUTPUT_FOR_FINISHED_REQUEST}) OUTPUT_APPLIED_AFTER_ABORT;
    }

    /** The scenario at one point of its family (see the race's grid). */
    public DoubleFreeOnAbortedAsyncSaveScenario(FixSet fixes, Configuration config, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.ALWAYS, 4), p);
        sendFamily(REQUEST_ID, p);
        rig.admit(REQUEST_ID);
        actors(rig.clientAbort(REQUEST_ID), rig.busyLoop().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.ABORTED).and(finished(REQUEST_ID, FINISHED_ABORTED)),
                ending(Outcome.COMPLETED).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED, FINISHED_STOPPED)));
    }
}
