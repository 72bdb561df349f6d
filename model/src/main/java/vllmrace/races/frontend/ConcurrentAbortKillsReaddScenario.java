package vllmrace.races.frontend;

import java.util.List;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.frontend.FrontendAwaits;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.SamplingParams;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Ending;
import vllmrace.races.Violating;

/**
 * ConcurrentAbortKillsReadd: two aborts of one id are in flight at once; the first completes, the client re-adds the
 * id, and the second abort's late ABORT finishes the new request, even with #15326's ordered abort.
 *
 * <p><b>Upstream.</b> Found by this suite in PR #15326's ordered abort (hidva, closed, not merged): {@code AsyncLLM.abort}
 * computes the ids ({@code flatten_req_to_abort}), sends ABORT, and only then drops frontend state. Two aborts of X can
 * be in flight together: the client's {@code abort(X)} and {@code generate()}'s cancellation of the same request. Both
 * compute X before either drops it. Frontend ordering alone cannot keep frontend scope ⊇ EngineCore scope (lifecycle
 * §1(d)); unique internal ids (#27987, merged) close it: the late ABORT names X@1's internal id only.
 *
 * <p><b>Set-up and actors.</b> X@1 is added and running in EngineCore. Actor 1: {@code AsyncLLM.abort} of X@1's
 * internal id (generate()'s cancellation, {@code abort(q.request_id, internal=True)}: X before #27987, X-1 after). Actor 2: the client's {@code AsyncLLM.abort(X)}, then {@code AsyncLLM.add_request(X)} (it resubmits the
 * id). Arbiter: EngineCore drains its input socket in wire order, the output handler runs, the detectors check FE1,
 * FE2 and FE3.
 *
 * <pre>
 *   actor 1: abort(X) (cancellation)          actor 2: abort(X), add_request(X)          EngineCore (arbiter)
 *   1. flatten_req_to_abort([X]) -> [X@1]
 *                                             2. flatten_req_to_abort([X]) -> [X@1]
 *                                             3. await abort_requests_async -> ABORT(X)
 *                                             4. abort_requests: request_states.pop(X)
 *                                             5. OutputProcessor.add_request(X@2): ok
 *                                             6. await add_request_async -> ADD(X@2)
 *   7. await abort_requests_async -> ABORT(X)
 *   8. abort_requests: request_states.pop(X)  (X@2's state)
 *                                                                                        9. ABORT(X): X@1 aborted
 *                                                                                        10. ADD(X@2)
 *                                                                                        11. ABORT(X) finishes X@2
 * </pre>
 *
 * <p>Run one after the other the actors are clean: actor 1 first aborts X@1 and actor 2's abort is a no-op; actor 2
 * first aborts X@1 and re-adds X@2, and actor 1's abort, computed after that, aborts X@2 as its caller asked.
 *
 * <p>The same late abort can instead drop X@2's frontend state (its third step, {@code abort_requests}, pops whatever
 * state X names by then) before ADD(X@2) is sent: EngineCore then runs X@2 for nobody.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: its window is between the frontend and EngineCore's input
 * queue, whatever the number of batches in flight.
 *
 * <p><b>Yields.</b> #15326's ordered abort has two awaits. The one before the ABORT send (steps 1 to 7) never suspends
 * upstream: {@code _send_input} queues the ABORT by a synchronous call; only an await inserted before the send makes the
 * late ABORT. The one after it (step 7 to 8) suspends only under input socket back-pressure, which makes the late state
 * drop. vLLM's input socket never pushes back (a ROUTER with SNDHWM=0), and vLLM main's abort is not #15326's order
 * anyway: it drops and sends in one step. Its reported, fixed and only-closer variants run with both conditions holding
 * ({@code Race.needsYield}).
 *
 * <p><b>Invariant</b> (FE2 of lifecycle §5): an ABORT finishes the request it was computed for; and FE3's converse: no
 * engine request runs without the frontend state that receives its output.
 *
 * <p><b>Verdicts.</b> Reported ({@code UNIQUE_INTERNAL_IDS} off, {@code ORDERED_ABORT} on): some interleaving shows
 * {@code LATE_ABORT_KILLS_READD}. Fixed (every fix): never. vLLM main: closed, by #27987 (the late ABORT names
 * {@code X-1}; X@2 is {@code X-2}). vLLM main, ids not randomized ({@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1},
 * #34415): clean, no await in its window yields (both aborts are one step each).
 */
public final class ConcurrentAbortKillsReaddScenario extends FrontendScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("both aborts finished X@1 (the second found nothing, or ran after the re-add and aborted X@2 as asked); "
                + "every ABORT hit the request it was computed for") ABORTS_HIT_THEIR_REQUEST,
        @Violating(value = "an ABORT computed for X@1 reached EngineCore after ADD(X@2) and finished X@2", detectors = {ViolationKind.ABORT_HIT_WRONG_REQUEST},
                cascade = {ViolationKind.DUPLICATE_LIVE_REQUEST, ViolationKind.ORPHANED_FRONTEND_REQUEST, ViolationKind.ENGINE_REQUEST_WITHOUT_FRONTEND},
                cascadeWhy = "when the re-add reached EngineCore while the first request was still live, the id is held twice and the "
                        + "killed re-add's caller waits forever; with n = 2 the late abort's state drop, by the parent id the re-add "
                        + "reuses, also drops the re-added children's states, so a child the ABORT missed runs for nobody") LATE_ABORT_KILLS_READD,
        @Violating(value = "the late abort's state drop (OutputProcessor.abort_requests) removed X@2's frontend state: EngineCore "
                + "runs X@2 and its response goes to nobody (FE3's converse)", detectors = {ViolationKind.ENGINE_REQUEST_WITHOUT_FRONTEND}) LATE_ABORT_DROPS_READD_STATE;
    }

    private final Coroutine<List<String>> cancellation;
    private final Coroutine<RequestOutputCollector> abortAndResubmit;

    /** The scenario at one point of its family: {@code n}, the requests' parallel samples (default 1). */
    public ConcurrentAbortKillsReaddScenario(FixSet fixes, Configuration config, Params p) {
        super(new VllmInstance(fixes, config));
        SamplingParams params = SamplingParams.maxTokens(MAX_TOKENS).withN(p.get("n", 1, 1));
        RequestOutputCollector first = vllm.asyncLlm().addRequest(REQUEST_ID, params).run().join();
        vllm.engineCore().runBusyLoopOnce();
        vllm.asyncLlm().outputHandler().run().join();
        // generate()'s cancellation aborts its own request by internal id (abort(q.request_id, internal=True)): X
        // itself before #27987, X-1 after; for n = 2, q.request_id is the parent's id, whose branch drops the parent
        cancellation = vllm.asyncLlm().abort(first.requestId(), true);
        abortAndResubmit = Coroutine.sequence("client: abort(X), add_request(X)", vllm.asyncLlm().abort(REQUEST_ID), FrontendAwaits.CLIENT_NEXT_CALL,
                vllm.asyncLlm().addRequest(REQUEST_ID, params));
        actors(cancellation, abortAndResubmit);
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.ABORTS_HIT_THEIR_REQUEST));
    }

}
