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
 * DoubleAbortApplication: an ABORT goes to both of EngineCore's queues; the input queue applies it and then a re-ADD of
 * the same id; the aborts queue's copy, applied before the next update_from_output, aborts the new request.
 *
 * <p><b>Upstream.</b> No report: a hazard this suite noticed while modelling #29987 ("[BugFix] Eagerly abort cancelled
 * final-step requests", njhill, merged). {@code EngineCoreProc.process_input_sockets} (core.py@ac3cb2e2, the same at
 * 00080ee1) puts an ABORT in {@code aborts_queue} and in {@code input_queue}, "ok because aborting in the scheduler is
 * idempotent"; {@code _handle_client_request} applies the input-queue copy, {@code _process_aborts_queue} the other, and
 * {@code aborts_queue} is cleared only when the engine is idle. {@code finish_requests} is keyed by id, so the premise
 * holds per request, not per id: with reused engine ids (before #27987, or with {@code
 * VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1}, #34415 merged; #45688, open, would make that the P/D default) the second
 * application finds the re-added request.
 *
 * <p><b>Set-up and actors.</b> No connector. X@1 and another request Y (Y@2, which keeps the engine busy, so the idle-time
 * clear never runs) were added and are decoding; the batch queue is full. Actor 1: the client: its ABORT(X) reaches the
 * input thread, then its re-submitted ADD(X@3). Actor 2: two busy-loop iterations.
 *
 * <pre>
 *   actor 1: client                          actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: X@1 and Y decoding, batch queue full)
 *   1. ABORT(X) -> aborts_queue, input_queue
 *   2. ADD(X@3) -> input_queue
 *                                            3. _process_input_queue: ABORT(X) finishes X@1;
 *                                               ADD(X@3) -> Scheduler.add_request
 *                                            4. schedule(N+1) (X@3 admitted)
 *                                            5. _process_aborts_queue: the copy of ABORT(X)
 *                                               -> finish_requests([X]) finishes X@3 (FE2)
 *                                                                                          6. X@3's client never gets
 *                                                                                             an output
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (FE2): an ABORT finishes the request it was sent for, never a later request under its id.
 *
 * <p><b>Window.</b> Both sequential orders show it (the ABORT and the ADD arriving between two busy-loop iterations is the
 * ordinary case); only an ABORT landing while a step executes, drained by that step's {@code _process_aborts_queue} before
 * the ADD is applied, avoids it.
 *
 * <p><b>Verdicts.</b> Reported ({@code UNIQUE_INTERNAL_IDS} and {@code ABORT_APPLIED_ONCE} off): {@code
 * SECOND_ABORT_KILLS_READD}. Fixed: never. Each closer alone: never (with #27987 the copy names {@code X-1}, already
 * finished; with the suite's {@code ABORT_APPLIED_ONCE} the copy is dropped when the input queue applies it). vLLM main:
 * closed, by #27987. vLLM main, ids not randomized: racy
 * ({@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1}, #34415: {@code assign_request_id} keeps the client's id, so #27987's
 * suffix is not there to tell the two requests apart).
 */
public final class DoubleAbortApplicationScenario extends SchedulerRaceScenario {
    /** The client's id, sent twice: the engine ids of its two ADDs come from it. */
    public static final String CLIENT_ID = "X";
    public static final String OTHER = "Y";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("X@1 aborted once (or already finished by length); X@3 ran to its length") READD_RUNS,
        @Violating(value = "the aborts_queue copy of ABORT(X), applied after the input queue re-added X, finished X@3 (FE2): "
                + "its client never gets an output", detectors = {ViolationKind.ABORT_HIT_WRONG_REQUEST}) SECOND_ABORT_KILLS_READD;
    }

    private final EngineCoreRig.Resubmission ids;

    /** The scenario at one point of its family: {@code maxTokens} of X and Y (default 4). */
    public DoubleAbortApplicationScenario(FixSet fixes, Configuration config, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.NEVER, 8), p);
        int maxTokens = p.get("maxTokens", 4, 2);
        ids = rig.resubmission(CLIENT_ID);
        rig.sendAdd(ids.first(), 4, maxTokens);
        rig.sendAdd(OTHER, 4, maxTokens);
        rig.runBusyLoopOnce(); // both added; schedule(1)
        rig.dispatchStep(); // schedule(2) in flight (async: the batch queue is full, the loop blocked on step 1)
        rig.track(ids.first());
        actors(rig.clientAbortThenResubmit("client: abort(X), add_request(X)", ids, 4, maxTokens),
                rig.busyLoop().finishStepInFlight().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        // X@1 aborted (no output) or already done by length (its "length" shares the id's record without #27987)
        return List.of(ending(Outcome.READD_RUNS).and(status(ids.first(), FINISHED_ABORTED), reasons(ids.second(), "length")),
                ending(Outcome.READD_RUNS).and(status(ids.first(), FINISHED_LENGTH_CAPPED),
                        ids.sameId() ? reasons(ids.second(), "length", "length") : reasons(ids.second(), "length")));
    }
}
