package vllmrace.races.frontend;

import java.util.List;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.OutputProcessor;
import vllmrace.model.frontend.RequestAlreadyRunningException;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.model.frontend.SamplingParams;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;
import vllmrace.races.Ending;

/**
 * StopStringLateAbort: process_outputs drops X when it finds a stop string and the output handler sends ABORT(X) later;
 * a re-added X is killed by that late ABORT and its caller never gets a final output.
 *
 * <p><b>Upstream.</b> Issue #23697 (closed as stale), the #15326 window on the stop-string path (lifecycle §1(b)/(c));
 * #24382 proposed a "pending abort" state (closed, not merged); closed structurally by #27987 (unique internal ids,
 * merged). The ordered variant ({@code ORDERED_FINISH_ABORT}, a suite proposal) is the reading of #15326's
 * {@code _handle_finished_reqs}: send ABORT for {@code reqs_to_abort}, then drop their state. EngineCore does not know
 * stop strings: the frontend's {@code process_outputs} finds one, finishes the request and drops its state at once, and
 * the output handler only then awaits sending ABORT for it.
 *
 * <p><b>Set-up and actors.</b> X@1 is added with a stop string the engine does not know about (the model: it appears with
 * the first output token) and {@code max_tokens} 16; EngineCore runs one step, so X@1's first token waits on the output
 * socket. Actor 1: one pass of the output handler. Actor 2: {@code AsyncLLM.add_request(X)} (a new request, same id).
 * Arbiter: EngineCore drains its input socket in wire order (no model step, so no new output), and the detectors check
 * FE1, FE2, FE3 and FE4.
 *
 * <pre>
 *   actor 1: output_handler                        actor 2: add_request(X)            EngineCore (arbiter)
 *   1. await get_output_async -> X@1's token
 *   2. process_outputs: stop string in X@1
 *      -> request_states.pop(X), reqs_to_abort=[X]
 *      await asyncio.sleep(0)  (a batch over 128 outputs)
 *                                                  3. OutputProcessor.add_request(X@2)
 *                                                     X not in request_states -> ok
 *                                                  4. await add_request_async -> ADD(X@2)
 *   5. await abort_requests_async([X]) -> ABORT(X)
 *                                                                                     6. ADD(X@2) while X@1 is live
 *                                                                                     7. ABORT(X) finishes X@2
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: its window is between the frontend and EngineCore's input
 * queue, whatever the number of batches in flight.
 *
 * <p><b>Yields.</b> Between steps 2 and 5 the output handler awaits {@code asyncio.sleep(0)} only between chunks of
 * {@code VLLM_V1_OUTPUT_PROC_CHUNK_SIZE} (128) outputs, and that sleep sits between a chunk's {@code process_outputs} and
 * its ABORT send (async_llm.py@00080ee1 {@code output_handler}): the window opens when one EngineCore batch holds more than
 * 128 outputs and the stop string finished X@1 outside the last chunk (an output batch over 128 outputs), or with an
 * await inserted before the send. With a smaller batch the ABORT is queued in the step that finds the stop string. Its
 * reported, fixed and only-closer variants run with both conditions holding ({@code Race.needsYield}).
 *
 * <p><b>Invariant</b> (FE1, FE2, FE3 of lifecycle §5): frontend scope ⊇ EngineCore scope, so at most one live request per
 * id reaches EngineCore, an ABORT finishes the request it was computed for, and every caller gets a final output.
 *
 * <p><b>Verdicts.</b> Reported ({@code ORDERED_FINISH_ABORT} and {@code UNIQUE_INTERNAL_IDS} off): some interleaving
 * shows {@code LATE_ABORT_KILLS_READD}. Fixed: never; each of the two switches closes it alone. vLLM main: closed, by
 * #27987. vLLM main, ids not randomized: racy (output batch over 128 outputs)
 * ({@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1}, #34415: {@code assign_request_id} keeps the client's id, so #27987's
 * suffix is not there to tell the two requests apart), under a load of more than 128 running requests.
 */
public final class StopStringLateAbortScenario extends FrontendScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("add_request(X) saw X still tracked and raised: X@1 stopped, its ABORT sent, nothing re-added") READD_REJECTED,
        @Clean("X re-added after ABORT(X@1) was on the wire (or under a fresh internal id): X@2 runs") READDED_AFTER_ABORT,
        @Violating(value = "ADD(X@2) reached EngineCore before the stop string's ABORT(X@1): two live requests "
                + "under X, and the late ABORT finishes X@2, whose caller then never gets a final output", detectors = {ViolationKind.DUPLICATE_LIVE_REQUEST, ViolationKind.ABORT_HIT_WRONG_REQUEST, ViolationKind.ORPHANED_FRONTEND_REQUEST}) LATE_ABORT_KILLS_READD;
    }

    private final RequestOutputCollector stoppedQueue;
    private final Coroutine<Integer> outputHandler;
    private final Coroutine<RequestOutputCollector> add;

    /**
     * The scenario at one point of its family: {@code n}, both requests' parallel samples (default 1). With n = 2 the
     * children are {@code 0_X} and {@code 1_X} (before #27987), so X@1's children and the re-added ones share ids.
     */
    public StopStringLateAbortScenario(FixSet fixes, Configuration config, Params p) {
        super(new VllmInstance(fixes, config));
        int n = p.get("n", 1, 1);
        stoppedQueue = vllm.asyncLlm().addRequest(REQUEST_ID, new SamplingParams(n, MAX_TOKENS, 1)).run().join();
        vllm.engineCore().runBusyLoopOnce(); // ADD(X@1) applied, one token sent: the stop string is in it
        outputHandler = vllm.asyncLlm().outputHandler();
        add = vllm.asyncLlm().addRequest(REQUEST_ID, SamplingParams.maxTokens(MAX_TOKENS).withN(n));
        actors(outputHandler, add);
    }

    @Override
    protected void settle() {
        vllm.engineCore().processInputQueue(); // no engine step: nothing new for the output handler
        vllm.checkQuiescence();
    }

    @Override
    protected List<Ending> endings() {
        Ending.Fact stopped = new Ending.Fact("X@1's caller got one final output, finished by its stop string",
                () -> stoppedQueue.numFinalOutputs() == 1 && OutputProcessor.FINISH_REASON_STOP.equals(stoppedQueue.finishReason()));
        return List.of(ending(Outcome.READD_REJECTED).and(stopped).actor2Raises(RequestAlreadyRunningException.class),
                ending(Outcome.READDED_AFTER_ABORT).and(stopped));
    }

    /** X@1's collector: it must get exactly one final output, {@code stop}. */
    public RequestOutputCollector stoppedQueue() {
        return stoppedQueue;
    }
}
