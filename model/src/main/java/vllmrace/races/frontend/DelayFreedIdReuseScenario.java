package vllmrace.races.frontend;

import java.util.List;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.SamplingParams;
import vllmrace.model.frontend.OutputProcessor;
import vllmrace.model.frontend.RequestAlreadyRunningException;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;
import vllmrace.races.Ending;

/**
 * DelayFreedIdReuse: even with ordered abort, an aborted request whose blocks are delay-freed stays in
 * Scheduler.requests; a re-ADD of its id collides. Ordered abort alone is not enough; unique internal ids are.
 *
 * <p><b>Upstream.</b> PR #27987 ("[Core] Add a random suffix to frontend-provided request IDs", markmc, merged), its
 * point 3: P/D, where the prefill engine keeps tracking a request long after the frontend finished it (#20139);
 * lifecycle §1(d). A connector that async-saves finished requests makes {@code request_finished} return
 * {@code delay_free_blocks=True} (an offloading connector, or the P side of a P/D deployment): an aborted request stays
 * in {@code Scheduler.requests} (FINISHED_ABORTED) until its {@code finished_sending}.
 *
 * <p><b>Set-up and actors.</b> One connected model, frontend → FIFO → EngineCore → Scheduler with KV blocks and a
 * connector that async-saves every finished request ({@link TestAsyncConnector.SavePolicy#ALWAYS}). X@1 is added and
 * running (it holds a KV block). Actor 1: {@code AsyncLLM.abort(X)}, then two EngineCore busy-loop iterations, each
 * applying what arrived so far (the save still in flight). Actor 2: {@code AsyncLLM.add_request(X)} (the client resubmits the id). Arbiter: the save
 * completes and EngineCore steps until X@1 is released, THEN applies input it has not applied yet (a re-ADD that arrives
 * late lands after the release), runs, and the output handler runs; then FE1/FE3/FE4 and the scheduler's SC checks.
 * Both sequential orders are clean (add first: rejected; abort and its iterations first: the ADD arrives after the
 * release), so the collision is a race of the resubmit with the delayed free.
 *
 * <pre>
 *   actor 1: abort(X), then EngineCore applies it      actor 2: add_request(X)
 *   1. flatten_req_to_abort([X])  (X still tracked)
 *   2. await abort_requests_async -> ABORT(X@1)
 *   3. abort_requests: request_states.pop(X)
 *                                                      4. OutputProcessor.add_request(X@2): X untracked -> ok
 *                                                      5. await add_request_async -> ADD(X@2)
 *   6. EngineCore busy loop: ABORT(X@1) -> finish_requests -> request_finished: delay=True, X@1 stays in requests
 *                            ADD(X@2) -> Scheduler.add_request: X already held -> duplicate id
 *   (or ADD(X@2) is sent during or after iteration 1, and iteration 2 takes it: the same collision)
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: its window is between the frontend and EngineCore's input
 * queue, whatever the number of batches in flight.
 *
 * <p><b>Yields.</b> It needs no yield inside a frontend coroutine: steps 1 to 3 are one atomic step upstream (the ABORT is
 * queued by a synchronous call) and the add is one too; the window is between the abort and EngineCore's busy loop,
 * another process.
 *
 * <p><b>Invariant</b> (FE1 of lifecycle §5, and #15326's frontend scope ⊇ EngineCore scope): at most one request per id
 * in EngineCore. The wire order ADD(X@1) ABORT(X@1) ADD(X@2) is exactly what #15326 enforces, and still is not enough
 * (upstream today: the "duplicate request id" assert kills EngineCore; 2025-H1: X@2 overwrites the entry).
 *
 * <p><b>Verdicts.</b> Reported (every fix except {@code UNIQUE_INTERNAL_IDS}, so {@code ORDERED_ABORT} is on): some
 * interleaving shows {@code COLLIDES_WITH_DELAY_FREED}. Fixed ({@code UNIQUE_INTERNAL_IDS}: X@2 is {@code X-2} in
 * EngineCore): never. vLLM main: closed, by #27987. vLLM main, ids not randomized: racy
 * ({@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1}, #34415: {@code assign_request_id} keeps the client's id, so #27987's
 * suffix is not there to tell the two requests apart).
 */
public final class DelayFreedIdReuseScenario extends FrontendScenario {
    static final int NUM_GPU_BLOCKS = 8;
    private static final int RELEASE_ITERATIONS = 3;
    /**
     * EngineCore's busy-loop iterations in actor 1 after the abort, the save still in flight: the window is from the
     * frontend's pop to the last of them taking its input. Upstream the loop goes round for as long as the save takes;
     * one iteration made this the thinnest JCStress window (~800 violating per million, under load a fixed run fell
     * short of its floor).
     */
    static final int BUSY_LOOP_ITERATIONS = 2;

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("add_request(X) saw X still tracked and raised; X@1 is aborted and released by its finished_sending") READD_REJECTED,
        @Clean("X re-added under a fresh internal id while X@1 waits for its finished_sending: "
                + "X@1 is released, X@2 runs") READDED_BESIDE_DELAY_FREED,
        @Violating(value = "ADD(X@2) reached EngineCore while the aborted X@1 was still in Scheduler.requests "
                + "(delay-freed): a duplicate id in EngineCore, although the ABORT went out first", detectors = {ViolationKind.DUPLICATE_LIVE_REQUEST},
                cascade = {ViolationKind.ABORT_HIT_WRONG_REQUEST, ViolationKind.ORPHANED_FRONTEND_REQUEST, ViolationKind.BLOCK_LEAK, ViolationKind.ENGINE_ASSERT, ViolationKind.LATE_TRANSFER_REPORT},
                cascadeWhy = "with one id for two requests the abort, the save's finished_sending and the free of one land on the other (an engine assert, a late report, a leaked block, an orphaned caller)") COLLIDES_WITH_DELAY_FREED;
    }

    private final int n;
    private final RequestOutputCollector abortedQueue;
    private final Coroutine<List<String>> abort;
    private final Coroutine<RequestOutputCollector> add;

    /** The scenario at one point of its family: {@code n}, the requests' parallel samples (default 1). */
    public DelayFreedIdReuseScenario(FixSet fixes, Configuration config, Params p) {
        super(new VllmInstance(fixes, config, TestAsyncConnector.SavePolicy.ALWAYS, NUM_GPU_BLOCKS));
        n = p.get("n", 1, 1);
        SamplingParams params = SamplingParams.maxTokens(MAX_TOKENS).withN(n);
        abortedQueue = vllm.asyncLlm().addRequest(REQUEST_ID, params).run().join();
        vllm.engineCore().runBusyLoopOnce(); // ADD(X@1) applied, X@1 scheduled: it holds a KV block
        vllm.asyncLlm().outputHandler().run().join();
        // the client cancels X@1: generate()'s cancellation, abort(q.request_id, internal=True) (X before #27987)
        abort = vllm.asyncLlm().abortThen(abortedQueue.requestId(), true, "EngineCore.run_busy_loop", BUSY_LOOP_ITERATIONS,
                () -> vllm.engineCore().runBusyLoopOnce());
        add = vllm.asyncLlm().addRequest(REQUEST_ID, params);
        actors(abort, add);
    }

    @Override
    protected void settle() {
        for (int i = 0; i < RELEASE_ITERATIONS; i++) {
            vllm.connector().finishInFlightTransfers();
            vllm.engineCore().step(); // no new input: the pending save's finished_sending releases X@1
        }
        for (int i = 0; i < RELEASE_ITERATIONS; i++) {
            vllm.engineCore().runBusyLoopOnce(); // now the late input, then the re-added request runs
            vllm.connector().finishInFlightTransfers();
        }
        vllm.asyncLlm().outputHandler().run();
        vllm.checkQuiescence();
    }

    @Override
    protected List<Ending> endings() {
        Ending.Fact aborted = new Ending.Fact("X@1's caller got one final output, finished by its abort",
                () -> abortedQueue.numFinalOutputs() == 1 && OutputProcessor.FINISH_REASON_ABORT.equals(abortedQueue.finishReason()));
        return List.of(ending(Outcome.READD_REJECTED).and(aborted).actor2Raises(RequestAlreadyRunningException.class)
                        .and("X@1 released: the scheduler holds nothing", () -> vllm.scheduler().requestsSnapshot().isEmpty()),
                ending(Outcome.READDED_BESIDE_DELAY_FREED).and(aborted)
                        .and("X@1 released; X@2's " + n + " request(s) held", () -> vllm.scheduler().requestsSnapshot().size() == n));
    }
}
