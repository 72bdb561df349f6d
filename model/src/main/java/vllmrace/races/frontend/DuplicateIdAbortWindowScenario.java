package vllmrace.races.frontend;

import java.util.List;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.model.frontend.SamplingParams;
import vllmrace.model.frontend.RequestAlreadyRunningException;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;
import vllmrace.races.Ending;

/**
 * DuplicateIdAbortWindow: abort drops frontend state, then sends ABORT; a re-add of the same id slips its ADD in
 * between: two live requests under one id in EngineCore.
 *
 * <p><b>Upstream.</b> PR #15326 (hidva, closed, not merged), seed 001; re-reported as #23697; closed structurally by
 * #27987 (unique internal ids, merged). {@code AsyncLLM.abort} removes the request from
 * {@code OutputProcessor.request_states} and only then awaits sending ABORT to EngineCore. EngineCore keys everything
 * (requests, KV blocks) by request id, so it relies on the wire order ADD(req1) ABORT(req1) ADD(req2) for two requests
 * sharing an id.
 *
 * <p><b>Set-up and actors.</b> Request X is added and running in EngineCore. Actor 1: {@code AsyncLLM.abort(X)};
 * actor 2: {@code AsyncLLM.add_request(X)} (a new request, same id). Arbiter: EngineCore drains its input socket in wire
 * order, the output handler runs, and the detectors check FE1, FE2 and FE3.
 *
 * <pre>
 *   actor 1: abort(X)                          actor 2: add_request(X)            EngineCore (arbiter)
 *   1. OutputProcessor.abort_requests([X])
 *      -> request_states.pop(X)
 *   2. await abort_requests_async  ~suspends only if an await is inserted before the send~
 *                                              3. OutputProcessor.add_request(X@2)
 *                                                 X not in request_states -> ok
 *                                              4. await add_request_async -> ADD(X@2)
 *   5. (resumes) -> ABORT(X)
 *                                                                                 6. ADD(X@2) while X@1 is live
 *                                                                                 7. ABORT(X) finishes X@2
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: its window is between the frontend and EngineCore's input
 * queue, whatever the number of batches in flight.
 *
 * <p><b>Yields.</b> The window is the await at step 2, and upstream it does not suspend there: {@code abort_requests_async}
 * reaches {@code _send_input}, which queues the ABORT with a synchronous {@code send_multipart} call before anything is
 * awaited (core_client.py@00080ee1 {@code _send_input_message}); input-socket back-pressure would suspend only after the
 * ABORT has its place on the wire. #15326 showed the race by inserting {@code await asyncio.sleep(13)} at that point. So
 * the race needs an await inserted before the send ({@code Race.needsYield}): its reported, fixed and only-closer
 * variants run with one, as the report did, and results/frontend-yields.md shows it clean without.
 *
 * <p><b>Invariant</b> (FE1, FE2 of lifecycle §5): frontend scope ⊇ EngineCore scope, so at most one live request per id
 * reaches EngineCore and an ABORT finishes the request it was computed for.
 *
 * <p><b>Verdicts.</b> Reported (abort as reported, an await inserted before the send): some interleaving shows
 * {@code DUPLICATE_LIVE_ID}. Fixed: never ({@code ORDERED_ABORT}: send ABORT, then drop state; {@code UNIQUE_INTERNAL_IDS}
 * also closes it alone). vLLM main: closed, by #27987. vLLM main, ids not randomized
 * ({@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1}, #34415): clean, no await in its window yields (the state drop and the
 * ABORT are one step); an await added before the send would reopen it there, as #27987's suffix is not added.
 */
public final class DuplicateIdAbortWindowScenario extends FrontendScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("add_request(X) saw X still running and raised: wire order ADD(X@1) ABORT(X@1)") READD_REJECTED,
        @Clean("X re-added after ABORT: wire order ADD(X@1) ABORT(X@1) ADD(X@2); X@2 runs") READDED_AFTER_ABORT,
        @Violating(value = "ADD(X@2) reached EngineCore before ABORT(X@1): two live requests under X, "
                + "and the late ABORT finishes X@2, whose caller then never gets a final output", detectors = {ViolationKind.DUPLICATE_LIVE_REQUEST, ViolationKind.ABORT_HIT_WRONG_REQUEST, ViolationKind.ORPHANED_FRONTEND_REQUEST}) DUPLICATE_LIVE_ID;
    }

    private final Coroutine<List<String>> abort;
    private final Coroutine<?> add;

    /** The scenario at one point of its family: {@code n}, the requests' parallel samples (default 1). */
    public DuplicateIdAbortWindowScenario(FixSet fixes, Configuration config, Params p) {
        super(new VllmInstance(fixes, config));
        SamplingParams params = SamplingParams.maxTokens(MAX_TOKENS).withN(p.get("n", 1, 1));
        RequestOutputCollector first = vllm.asyncLlm().addRequest(REQUEST_ID, params).run().join();
        vllm.engineCore().runBusyLoopOnce();
        vllm.asyncLlm().outputHandler().run().join();
        // the client cancels X@1: generate()'s cancellation, abort(q.request_id, internal=True) (X before #27987)
        abort = vllm.asyncLlm().abort(first.requestId(), true);
        add = vllm.asyncLlm().addRequest(REQUEST_ID, params);
        actors(abort, add);
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.READD_REJECTED).actor2Raises(RequestAlreadyRunningException.class), ending(Outcome.READDED_AFTER_ABORT));
    }
}
