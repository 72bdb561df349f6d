package vllmrace.races.frontend;

import java.util.List;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.RequestAlreadyRunningException;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.model.frontend.SamplingParams;
import vllmrace.races.Clean;
import vllmrace.races.Ending;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * ExternalAbortOrphansReadd, a question, not a catalogued race: can an abort by external id land between a re-add's
 * {@code OutputProcessor.add_request} and its ADD, so that the frontend drops the new request while its ADD reaches
 * EngineCore after the ABORT, and EngineCore runs it for nobody, with every fix on? Noticed while modelling the frontend
 * (issue 24); {@code ExternalAbortOrphanTest} computes the answer and results/frontend-yields.md prints it.
 *
 * <p><b>Upstream.</b> async_llm.py@00080ee1 {@code AsyncLLM._add_request}: {@code self.output_processor.add_request(request,
 * ...)} then {@code await self.engine_core.add_request_async(request)}; core_client.py {@code AsyncMPClient.add_request_async}
 * awaits {@code self._send_input(ADD, request)}, a plain function whose {@code _send_input_message} calls
 * {@code self.input_socket.send_multipart(msg, copy=False)} and returns its future. pyzmq's {@code _add_send_event} sends at
 * once when it can and otherwise queues the message behind earlier queued ones: either way the ADD's place on the wire is
 * fixed by that call, in the same atomic step as {@code output_processor.add_request}. {@code AsyncLLM.abort} likewise
 * calls {@code output_processor.abort_requests} and queues the ABORT in one step. So the two frontend actions cannot
 * interleave between state and wire on one client, whatever the socket does; the window needs an await before the send
 * ({@link vllmrace.model.asyncio.YieldCondition#AWAIT_INSERTED_BEFORE_SEND}), which no vLLM version has.
 *
 * <p><b>Set-up and actors.</b> X@1 is added and running in EngineCore. Actor 1: the client's {@code AsyncLLM.abort(X)} by
 * its external id (an API abort). Actor 2: {@code AsyncLLM.add_request(X)}, a second request under X (with randomized ids
 * the frontend takes it beside X@1 as {@code X-2}). Arbiter: EngineCore drains its input socket in wire order, the output
 * handler runs, the detectors check FE1 to FE4.
 *
 * <pre>
 *   actor 1: abort(X), external id                 actor 2: add_request(X)
 *                                                  1. OutputProcessor.add_request(X-2)
 *                                                     ~ only with an await inserted before the send ~
 *   2. OutputProcessor.abort_requests([X])
 *      -> external_req_ids[X] = [X-1, X-2]: both popped
 *   3. ABORT(X-1, X-2) on the wire
 *                                                  4. ADD(X-2) on the wire
 *   arbiter: EngineCore aborts is unknown; then ADD(X-2) runs for nobody
 * </pre>
 *
 * <p><b>Invariant</b> (FE3's converse, lifecycle §5): no engine request runs without the frontend state that receives its
 * output.
 *
 * <p><b>Verdicts.</b> Every fix on and every profile of vLLM main, under every yield condition vLLM can produce (and under
 * input-socket back-pressure too): never. Only an await inserted between {@code output_processor.add_request} and the
 * send opens it. Two known races show in the same set-up and are told apart: ParentRequestLeakOnAbort on the {@code n = 2}
 * point of vLLM main (#51629 is open), and DuplicateIdAbortWindow with ids not randomized and an await inserted. Points: {@code priorFinished} 1: X@1 has finished, so the re-add is the only request under X (ids not
 * randomized: the only way to re-add X); {@code n} 2: the re-add fans out two children, whose boundary also yields under
 * back-pressure.
 */
public final class ExternalAbortOrphansReaddScenario extends FrontendScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("add_request(X) saw X still tracked (ids not randomized) and raised") READD_REJECTED,
        @Clean("every engine request has the frontend state that receives its output: the abort ran before the re-add, "
                + "or after its ADD was queued, and its ABORT followed the ADD") NO_ORPHAN,
        @Violating(value = "the abort popped the re-add's frontend state and its ABORT reached EngineCore before the ADD: "
                + "EngineCore runs the re-add for nobody", detectors = {ViolationKind.ENGINE_REQUEST_WITHOUT_FRONTEND},
                cascade = {ViolationKind.LEAKED_PARENT_REQUEST}, cascadeWhy = "on the n = 2 point without #51629's fix the abort "
                + "that orphans a child also leaves its parent in parent_requests (ParentRequestLeakOnAbort)") ORPHANED_READD,
        @Violating(value = "not the orphan: ParentRequestLeakOnAbort (#51629, open) on the n = 2 re-add, aborted by its "
                + "external id after both children were added", detectors = {ViolationKind.LEAKED_PARENT_REQUEST}) PARENT_LEAKED,
        @Violating(value = "not the orphan: DuplicateIdAbortWindow's window (ids not randomized, an await inserted between "
                + "abort_requests and the ABORT send): ADD(X@2) before ABORT(X@1)", detectors = {ViolationKind.DUPLICATE_LIVE_REQUEST,
                ViolationKind.ABORT_HIT_WRONG_REQUEST, ViolationKind.ORPHANED_FRONTEND_REQUEST}) DUPLICATE_ID_WINDOW;
    }

    /** The scenario under {@code fixes} and {@code config} at one point ({@code priorFinished}, {@code n}). */
    public ExternalAbortOrphansReaddScenario(FixSet fixes, Configuration config, Params p) {
        super(new VllmInstance(fixes, config));
        RequestOutputCollector first = vllm.asyncLlm().addRequest(REQUEST_ID, p.get("priorFinished", 0, 0) == 1 ? 1 : MAX_TOKENS).run().join();
        vllm.engineCore().runBusyLoopOnce();
        vllm.asyncLlm().outputHandler().run().join();
        if (p.get("priorFinished", 0, 0) == 1) {
            vllm.engineCore().processInputQueue();
            requireSetUp(first.numFinalOutputs() == 1 && vllm.outputProcessor().requestStatesSnapshot().isEmpty(),
                    "X@1 did not finish");
        }
        Coroutine<?> abort = vllm.asyncLlm().abort(REQUEST_ID);
        Coroutine<?> add = vllm.asyncLlm().addRequest(REQUEST_ID, SamplingParams.maxTokens(MAX_TOKENS).withN(p.get("n", 1, 1)));
        actors(abort, add);
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.READD_REJECTED).actor2Raises(RequestAlreadyRunningException.class), ending(Outcome.NO_ORPHAN));
    }
}
