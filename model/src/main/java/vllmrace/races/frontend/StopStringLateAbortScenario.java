package vllmrace.races.frontend;

import java.util.List;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.OutputProcessor;
import vllmrace.model.frontend.RequestAlreadyRunningException;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.model.frontend.SamplingParams;
import vllmrace.races.Clean;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;
import vllmrace.races.RaceScenario;

/**
 * StopStringLateAbort (#23697, reference §1(b)/(c)). Set-up: request X@1 is added with a stop string the engine does
 * not know about (the model: it appears with the first output token) and {@code max_tokens} 16; EngineCore runs one
 * step, so X@1's first token waits on the output socket. Actor 1: one pass of the output handler: {@code
 * process_outputs} finds the stop string, finishes X@1 in the frontend and puts it in {@code reqs_to_abort}; then
 * {@code await abort_requests_async(reqs_to_abort)}. Actor 2: {@code AsyncLLM.add_request(X)} (a new request, same
 * id). Arbiter: EngineCore drains its input socket in wire order (no model step, so no new output for the output
 * handler), and the detectors check FE1 (one live request per id), FE2 (an ABORT finishes the request it was sent
 * for), FE3 and FE4.
 *
 * <p>As reported, {@code process_outputs} drops X@1's state before the ABORT is sent: a re-add in that window is
 * accepted, its ADD overtakes the ABORT, and the late ABORT(X) kills X@2, whose caller never gets a final output.
 * Closed by {@code ORDERED_FINISH_ABORT} (send ABORT, then drop state) and by {@code UNIQUE_INTERNAL_IDS} (the late
 * ABORT names X@1's internal id only).
 */
public final class StopStringLateAbortScenario implements RaceScenario {
    public static final String REQUEST_ID = "X";
    static final int MAX_TOKENS = 16;

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("add_request(X) saw X still tracked and raised: X@1 stopped, its ABORT sent, nothing re-added") READD_REJECTED,
        @Clean("X re-added after ABORT(X@1) was on the wire (or under a fresh internal id): X@2 runs") READDED_AFTER_ABORT,
        @Violating("ADD(X@2) reached EngineCore before the stop string's ABORT(X@1): two live requests "
                + "under X, and the late ABORT finishes X@2, whose caller then never gets a final output") LATE_ABORT_KILLS_READD,
        @Violating("any other violation or exception: a modelling error, never expected") UNEXPECTED;
    }

    private final VllmInstance vllm;
    private final RequestOutputCollector stoppedQueue;
    private final int setupSteps;
    private final Coroutine<Integer> outputHandler;
    private final Coroutine<RequestOutputCollector> add;

    public StopStringLateAbortScenario(FixSet fixes) {
        vllm = new VllmInstance(fixes);
        stoppedQueue = vllm.asyncLlm().addRequest(REQUEST_ID, new SamplingParams(1, MAX_TOKENS, 1)).run().join();
        vllm.engineCore().runBusyLoopOnce(); // ADD(X@1) applied, one token sent: the stop string is in it
        setupSteps = vllm.stepLog().size();
        outputHandler = vllm.asyncLlm().outputHandler();
        add = vllm.asyncLlm().addRequest(REQUEST_ID, MAX_TOKENS);
    }

    @Override
    public Coroutine<Integer> actor1() {
        return outputHandler;
    }

    @Override
    public Coroutine<RequestOutputCollector> actor2() {
        return add;
    }

    @Override
    public Outcome arbiter() {
        vllm.engineCore().processInputQueue(); // no engine step: nothing new for the output handler
        vllm.checkQuiescence();
        if (vllm.violations().has(ViolationKind.DUPLICATE_LIVE_REQUEST) || vllm.violations().has(ViolationKind.ABORT_HIT_WRONG_REQUEST)) {
            return Outcome.LATE_ABORT_KILLS_READD;
        }
        if (!vllm.violations().isEmpty() || actor1().failure() != null || stoppedQueue.numFinalOutputs() != 1
                || !OutputProcessor.FINISH_REASON_STOP.equals(stoppedQueue.finishReason())) {
            return Outcome.UNEXPECTED;
        }
        RuntimeException addFailure = actor2().failure();
        if (addFailure instanceof RequestAlreadyRunningException) {
            return Outcome.READD_REJECTED;
        }
        return addFailure == null ? Outcome.READDED_AFTER_ABORT : Outcome.UNEXPECTED;
    }

    @Override
    public List<Violation> violations() {
        return vllm.violations().all();
    }

    @Override
    public StepLog stepLog() {
        return vllm.stepLog();
    }

    @Override
    public int setupSteps() {
        return setupSteps;
    }

    public VllmInstance vllm() {
        return vllm;
    }

    /** X@1's collector: it must get exactly one final output, {@code stop}. */
    public RequestOutputCollector stoppedQueue() {
        return stoppedQueue;
    }
}
