package vllmrace.races.frontend;

import java.util.List;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.model.frontend.SamplingParams;
import vllmrace.races.Clean;
import vllmrace.races.Ending;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * ParentRequestLeakOnAbort: the client aborts an {@code n = 2} request X by its external id while its children are
 * live; {@code OutputProcessor.abort_requests} pops both children's states and never X's {@code ParentRequest}, which
 * stays in {@code parent_requests} for the life of the engine: one leaked entry per such abort.
 *
 * <p><b>Upstream.</b> PR #51629 (open): "{@code OutputProcessor.abort_requests} never drops the {@code ParentRequest} when
 * an {@code n>1} request is aborted by its external id." output_processor.py@d0782260: the first loop resolves the
 * external id through {@code external_req_ids} to the children's internal ids; for each, the {@code if req_state is not
 * None:} branch pops the state and puts the final output, and touches no parent; {@code parent_requests} is popped only
 * in the {@code elif parent := self.parent_requests.get(request_id)} branch (an abort by the parent's own internal id,
 * as {@code generate()}'s disconnect path sends: clean) and by {@code _finish_request} on a normal finish. The PR pops the
 * parent with its last child in the first branch, as {@code _finish_request} does.
 *
 * <p><b>Set-up and actors.</b> X is added with {@code n = 2} and {@code max_tokens} 1: children {@code 0_X'} and
 * {@code 1_X'} of parent {@code X'} (X's internal id), one collector. EngineCore runs one step: each child's only token,
 * final, waits on the output socket. Actor 1: one pass of the output handler. Actor 2: {@code AsyncLLM.abort(X)}, by the
 * external id (an API or integration abort).
 *
 * <pre>
 *   actor 1: output_handler                      actor 2: abort(X), external id
 *                                                1. OutputProcessor.abort_requests([X]):
 *                                                   external_req_ids[X] -> [0_X', 1_X'];
 *                                                   both states popped, final ABORT output;
 *                                                   parent_requests[X'] stays
 *                                                2. await abort_requests_async -> ABORT
 *   3. await get_output_async -> both tokens
 *   4. process_outputs: no state: dropped
 *   5. await abort_requests_async([])
 *   arbiter: EngineCore applies the ABORT; request_states empty, parent_requests = {X'}
 * </pre>
 *
 * <p>The output handler first, the children finish normally and {@code _finish_request} drops X' with the last one; the
 * abort then finds nothing. The window is the abort landing before the children's final outputs are processed.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: its window is in the frontend, whatever the number of
 * batches in flight.
 *
 * <p><b>Yields.</b> It needs no yield inside a coroutine: the abort (steps 1 and 2) is one atomic step upstream and the
 * output handler's pass another; the leak follows from their order alone.
 *
 * <p><b>Invariant</b> (FE4 of lifecycle §5): every parent in {@code parent_requests} has a child state (so the map is empty
 * when {@code request_states} is); and the
 * caller gets exactly one final output.
 *
 * <p><b>Verdicts.</b> Reported ({@code PARENT_RELEASED_ON_ABORT} off): some interleaving leaves X' in
 * {@code parent_requests}. Fixed: never. vLLM main: racy (#51629 open), whether ids are randomized or not: the external id
 * resolves to the children either way.
 */
public final class ParentRequestLeakOnAbortScenario extends FrontendScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("X's children finished before the abort (which found nothing), or the abort released X' with its last "
                + "child; X's caller got one final output") PARENT_RELEASED,
        @Violating(value = "the abort by external id popped both children's states and left X' in parent_requests",
                detectors = {ViolationKind.LEAKED_PARENT_REQUEST}) PARENT_LEAKED;
    }

    private final RequestOutputCollector queue;

    /**
     * The scenario at one point of its family: {@code maxTokens}, the children's (default 1: their first token is their
     * last); {@code priorUse} 1: an earlier one-token {@code n = 2} request under X was served to its end first (the
     * client id reused).
     */
    public ParentRequestLeakOnAbortScenario(FixSet fixes, Configuration config, Params p) {
        super(new VllmInstance(fixes, config));
        int maxTokens = p.get("maxTokens", 1, 1);
        if (p.get("priorUse", 0, 0) == 1) {
            RequestOutputCollector prior = vllm.asyncLlm().addRequest(REQUEST_ID, SamplingParams.maxTokens(1).withN(2)).run().join();
            vllm.engineCore().runBusyLoopOnce();
            vllm.asyncLlm().outputHandler().run();
            requireSetUp(prior.numFinalOutputs() == 1 && vllm.outputProcessor().requestStatesSnapshot().isEmpty(),
                    "the earlier request under X did not finish: " + prior.numFinalOutputs() + " final output(s)");
        }
        queue = vllm.asyncLlm().addRequest(REQUEST_ID, SamplingParams.maxTokens(maxTokens).withN(2)).run().join();
        vllm.engineCore().runBusyLoopOnce(); // both ADDs applied, one token per child on the output socket
        Coroutine<Integer> outputHandler = vllm.asyncLlm().outputHandler();
        Coroutine<List<String>> abort = vllm.asyncLlm().abort(REQUEST_ID);
        actors(outputHandler, abort);
    }

    /**
     * EngineCore applies what the abort sent; no second output-handler pass (actor 1 is the output handler, and a replay
     * tells actors from the arbiter by task), then the detectors at quiescence.
     */
    @Override
    protected void settle() {
        vllm.engineCore().processInputQueue();
        vllm.checkQuiescence();
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.PARENT_RELEASED).and(new Ending.Fact("X's caller got exactly one final output",
                () -> queue.numFinalOutputs() == 1)));
    }
}
