package vllmrace.model.frontend;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Mirrors {@code vllm/v1/engine/async_llm.py}, {@code AsyncLLM}: {@code add_request} / {@code _add_request}
 * (with {@code InputProcessor.assign_request_id} of #27987 and the {@code n > 1} fan-out of
 * {@code vllm/v1/engine/parallel_sampling.py}), {@code abort}, and one pass of the {@code output_handler} loop. Each method returns the upstream coroutine
 * as a {@link Coroutine} whose declared steps end where upstream {@code await}s; each boundary cites its await in
 * {@link FrontendAwaits}, and only those that suspend under the deployment's yield conditions let another coroutine run.
 */
public final class AsyncLlm {
    private final FixSet fixes;
    private final Configuration configuration;
    private final EventLoop loop;
    private final OutputProcessor outputProcessor;
    private final EngineCoreClient engineCore;
    private long arrivalClock;
    private long requestIdCounter;

    public AsyncLlm(FixSet fixes, Configuration configuration, EventLoop loop, OutputProcessor outputProcessor,
                    EngineCoreClient engineCore) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.configuration = Objects.requireNonNull(configuration, "configuration");
        this.loop = Objects.requireNonNull(loop, "loop");
        this.outputProcessor = Objects.requireNonNull(outputProcessor, "outputProcessor");
        this.engineCore = Objects.requireNonNull(engineCore, "engineCore");
    }

    /**
     * {@code AsyncLLM.add_request} for {@code n == 1} with no stop string: see {@link #addRequest(String, SamplingParams)}.
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     * @throws IllegalArgumentException for {@code maxTokens <= 0}, before any state changes
     */
    public Coroutine<RequestOutputCollector> addRequest(String requestId, int maxTokens) {
        InvalidRequestIdException.check("AsyncLLM.add_request", requestId);
        return addRequest(requestId, SamplingParams.maxTokens(maxTokens)); // SamplingParams rejects maxTokens < 1
    }

    /**
     * {@code AsyncLLM.add_request} → {@code _add_request}:
     * <ol>
     *   <li>{@code InputProcessor.assign_request_id} (#27987, {@link Fix#UNIQUE_INTERNAL_IDS}: internal id =
     *       external id + "-" + a suffix) and {@code output_processor.add_request(req)} (raises if the internal id is running);</li>
     *   <li>{@code await engine_core.add_request_async(req)}: ADD on the wire.</li>
     * </ol>
     * For {@code n > 1}: a {@link ParentRequest}, and the two steps once per child {@code "{idx}_{parent_id}"}, in
     * index order, as upstream awaits {@code _add_request} once per child. All children share one collector.
     *
     * <p>Upstream's suffix is 8 random characters; the model uses a per-instance counter ({@code X-1}, {@code X-2},
     * ...) so every run, replay and trace is deterministic. Only uniqueness matters to the races.
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     * @throws NullPointerException for null params, before any state changes
     */
    public Coroutine<RequestOutputCollector> addRequest(String requestId, SamplingParams params) {
        UpstreamPins.enter(UpstreamPin.ASYNC_LLM_ADD_REQUEST_INNER);
        UpstreamPins.enter(UpstreamPin.ASYNC_LLM_ADD_REQUEST);
        InvalidRequestIdException.check("AsyncLLM.add_request", requestId);
        Objects.requireNonNull(params, "params");
        RequestOutputCollector queue = new RequestOutputCollector(fixes);
        EngineCoreRequest[] requests = new EngineCoreRequest[params.n()];
        ParentRequest[] parent = new ParentRequest[1];
        String[] assigned = new String[1];
        Coroutine.Builder coroutine = Coroutine.builder(loop, "add_request(" + requestId + ")");
        for (int index = 0; index < params.n(); index++) {
            int idx = index;
            if (idx > 0) {
                coroutine.await(FrontendAwaits.NEXT_CHILD);
            }
            coroutine
                    .step("OutputProcessor.add_request", () -> {
                        if (idx == 0) {
                            assigned[0] = assignRequestId(requestId);
                            queue.bindRequestId(assigned[0]);
                            if (params.n() > 1) {
                                parent[0] = new ParentRequest(assigned[0], requestId, params.n());
                            }
                        }
                        String internalId = parent[0] == null ? assigned[0] : parent[0].getChildInfo(idx);
                        requests[idx] = new EngineCoreRequest(internalId, ++arrivalClock, params.maxTokens());
                        outputProcessor.addRequest(requests[idx], requestId, parent[0], idx, queue, params.stopAfterTokens());
                    })
                    .await(FrontendAwaits.ADD_SEND)
                    .step("EngineCoreClient.add_request_async", () -> engineCore.addRequestAsync(requests[idx]));
        }
        return coroutine.returning(() -> queue);
    }

    /**
     * {@code AsyncLLM.add_request} with streaming input (#28973, {@code _add_streaming_input_request}): a resumable
     * session whose chunks, each its token budget, the caller's input generator has all yielded before the first one
     * ends, with the final marker after them. Upstream each chunk is its own ADD of the same internal id, which
     * {@code Scheduler.add_request} appends to the session's {@code streaming_queue} and {@code OutputProcessor} to its
     * {@code input_chunk_queue}; the model sends one ADD carrying the later chunks in both queues. Two steps, as
     * {@link #addRequest(String, SamplingParams)}.
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     * @throws IllegalArgumentException for fewer than two chunks or a budget below 1, before any state changes
     */
    public Coroutine<RequestOutputCollector> addStreamingRequest(String requestId, int... chunkTokens) {
        InvalidRequestIdException.check("AsyncLLM.add_request", requestId);
        if (chunkTokens == null || chunkTokens.length < 2 || java.util.Arrays.stream(chunkTokens).anyMatch(t -> t < 1)) {
            throw new IllegalArgumentException("AsyncLLM.add_request: a streaming session has at least two chunks, each of at "
                    + "least one token, got " + (chunkTokens == null ? "null" : java.util.Arrays.toString(chunkTokens)));
        }
        UpstreamPins.enter(UpstreamPin.ASYNC_LLM_ADD_REQUEST);
        RequestOutputCollector queue = new RequestOutputCollector(fixes);
        List<Integer> later = java.util.Arrays.stream(chunkTokens).skip(1).boxed().toList();
        EngineCoreRequest[] request = new EngineCoreRequest[1];
        return Coroutine.builder(loop, "add_request(" + requestId + ", streaming input)")
                .step("OutputProcessor.add_request", () -> {
                    String internalId = assignRequestId(requestId);
                    queue.bindRequestId(internalId);
                    request[0] = new EngineCoreRequest(internalId, ++arrivalClock, 0, chunkTokens[0], 0, later);
                    outputProcessor.addRequest(request[0], requestId, null, 0, queue, 0);
                })
                .await(FrontendAwaits.ADD_SEND)
                .step("EngineCoreClient.add_request_async", () -> engineCore.addRequestAsync(request[0]))
                .returning(() -> queue);
    }

    /**
     * {@code generate()}'s loop taking what waits for it: {@code out = q.get_nowait() or await q.get()}, then {@code yield
     * out} to its caller; one step per take. {@code outputs} receives what it took (nothing when nothing waited: upstream
     * it would await the next put).
     */
    public Coroutine<Void> takeOutputs(RequestOutputCollector queue, int takes, List<RequestOutputCollector.Output> outputs) {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(outputs, "outputs");
        if (takes < 1) {
            throw new IllegalArgumentException("takeOutputs: takes must be at least 1, got " + takes);
        }
        Coroutine.Builder coroutine = Coroutine.builder(loop, "generate(" + queue.requestId() + ")");
        for (int i = 0; i < takes; i++) {
            if (i > 0) {
                coroutine.await(FrontendAwaits.CALLER_TAKES_OUTPUT);
            }
            coroutine.step("RequestOutputCollector.get", () -> {
                RequestOutputCollector.Output out = queue.getNowait();
                if (out != null) {
                    outputs.add(out);
                }
            });
        }
        return coroutine.build();
    }

    /** {@link InputProcessor#assignRequestId}, numbering this instance's ADDs. */
    private String assignRequestId(String externalReqId) {
        return InputProcessor.assignRequestId(fixes, configuration, externalReqId, ++requestIdCounter);
    }

    /**
     * {@code AsyncLLM.abort}. As reported (#15326): drop frontend state, then {@code await} the ABORT send:
     * in that window a re-add of the id passes the "already running" check. With {@link Fix#ORDERED_ABORT}:
     * compute the ids without dropping state, send ABORT, and only then drop state. The id may be external (it
     * resolves to its internal ids, all children of an {@code n > 1} request) or internal.
     * Aborting an id the frontend does not track is a no-op (upstream: the request may just have finished).
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     */
    public Coroutine<List<String>> abort(String requestId) {
        return abort(requestId, false);
    }

    /**
     * {@code AsyncLLM.abort(request_id, internal)}: as {@link #abort(String)}; with {@code internal} the id is an internal
     * one, as {@code generate()}'s cancellation sends {@code abort(q.request_id, internal=True)}: not looked up among
     * external ids, so a parent's own id aborts its children and drops the parent.
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     */
    public Coroutine<List<String>> abort(String requestId, boolean internal) {
        InvalidRequestIdException.check("AsyncLLM.abort", requestId);
        List<String> ids = new ArrayList<>();
        return abortSteps(requestId, internal, ids).returning(() -> List.copyOf(ids));
    }

    /**
     * Scenario composition, no upstream function of its own: {@link #abort(String)}'s steps, then {@code next} run
     * {@code times} times, each one more atomic step of the same task named {@code nextStep} (EngineCore's busy loop
     * going round). A scenario uses it to let EngineCore apply what the
     * abort sent right after the abort returns (the step runs the EngineCore model; upstream that runs in the
     * EngineCore process, which the frontend's steps never overlap with here because both are atomic units).
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     * @throws IllegalArgumentException when {@code times} is below 1
     */
    public Coroutine<List<String>> abortThen(String requestId, String nextStep, int times, Runnable next) {
        return abortThen(requestId, false, nextStep, times, next);
    }

    /**
     * Scenario composition, no upstream function of its own: EngineCore's busy loop going round {@code times} times as one
     * actor ({@code iteration} each time), ordered with the frontend's steps on this loop (each iteration atomic).
     *
     * @throws IllegalArgumentException when {@code times} is below 1
     */
    public Coroutine<Void> engineCoreIterations(int times, Runnable iteration) {
        Objects.requireNonNull(iteration, "iteration");
        if (times < 1) {
            throw new IllegalArgumentException("engineCoreIterations: times must be at least 1, got " + times);
        }
        Coroutine.Builder coroutine = Coroutine.builder(loop, "EngineCore busy loop");
        for (int i = 0; i < times; i++) {
            if (i > 0) {
                coroutine.await(FrontendAwaits.ENGINE_CORE_STEP);
            }
            coroutine.step("EngineCore.run_busy_loop", iteration);
        }
        return coroutine.build();
    }

    /** As {@link #abortThen(String, String, int, Runnable)}, the id internal or not ({@link #abort(String, boolean)}). */
    public Coroutine<List<String>> abortThen(String requestId, boolean internal, String nextStep, int times, Runnable next) {
        InvalidRequestIdException.check("AsyncLLM.abort", requestId);
        Objects.requireNonNull(nextStep, "nextStep");
        Objects.requireNonNull(next, "next");
        if (times < 1) {
            throw new IllegalArgumentException("abortThen: times must be at least 1, got " + times);
        }
        List<String> ids = new ArrayList<>();
        Coroutine.Builder coroutine = abortSteps(requestId, internal, ids);
        for (int i = 0; i < times; i++) {
            coroutine.await(FrontendAwaits.ENGINE_CORE_STEP).step(nextStep, next);
        }
        return coroutine.returning(() -> List.copyOf(ids));
    }

    private Coroutine.Builder abortSteps(String requestId, boolean internal, List<String> ids) {
        UpstreamPins.enter(UpstreamPin.ASYNC_LLM_ABORT);
        Map<String, Long> targets = new LinkedHashMap<>();
        Coroutine.Builder coroutine = Coroutine.builder(loop, "abort(" + requestId + ")");
        if (fixes.isOn(Fix.ORDERED_ABORT)) {
            coroutine
                    .step("OutputProcessor.flatten_req_to_abort", () -> collect(outputProcessor.flattenReqToAbort(List.of(requestId), internal), ids, targets))
                    .await(FrontendAwaits.ABORT_SEND)
                    .step("EngineCoreClient.abort_requests_async", () -> engineCore.abortRequestsAsync(ids, targets))
                    .await(FrontendAwaits.AFTER_ABORT_SEND)
                    // an internal parent id again (its children cannot change: a re-add makes a new parent), so its branch drops it
                    .step("OutputProcessor.abort_requests", () -> outputProcessor.abortRequests(internal ? List.of(requestId) : ids, internal));
        } else {
            coroutine
                    .step("OutputProcessor.abort_requests", () -> {
                        recordTargets(outputProcessor.flattenReqToAbort(List.of(requestId), internal), targets);
                        ids.addAll(outputProcessor.abortRequests(List.of(requestId), internal));
                    })
                    .await(FrontendAwaits.ABORT_SEND)
                    .step("EngineCoreClient.abort_requests_async", () -> engineCore.abortRequestsAsync(ids, targets));
        }
        return coroutine;
    }

    /**
     * One pass of {@code AsyncLLM._run_output_handler}'s loop:
     * <ol>
     *   <li>{@code outputs = await engine_core.get_output_async()};</li>
     *   <li>{@code output_processor.process_outputs(outputs)}: a stop string found here finishes the request in the
     *       frontend and puts it in {@code reqs_to_abort}; as upstream, its state is dropped right here;</li>
     *   <li>{@code await engine_core.abort_requests_async(reqs_to_abort)};</li>
     *   <li>only with {@link Fix#ORDERED_FINISH_ABORT} (#15326's {@code _handle_finished_reqs}, #23697): after that
     *       await, {@code _finish_request} drops the states of {@code reqs_to_abort}, so a re-add of their ids is
     *       rejected until their ABORT is on the wire.</li>
     * </ol>
     *
     * @return the number of outputs processed
     */
    public Coroutine<Integer> outputHandler() {
        UpstreamPins.enter(UpstreamPin.ASYNC_LLM_OUTPUT_HANDLER);
        List<EngineCoreOutput> outputs = new ArrayList<>();
        List<String> reqsToAbort = new ArrayList<>();
        Map<String, Long> targets = new LinkedHashMap<>();
        boolean ordered = fixes.isOn(Fix.ORDERED_FINISH_ABORT);
        Coroutine.Builder coroutine = Coroutine.builder(loop, "output_handler")
                .step("EngineCoreClient.get_output_async", () -> outputs.addAll(engineCore.getOutputAsync()))
                .await(FrontendAwaits.OUTPUTS_TAKEN)
                .step("OutputProcessor.process_outputs", () -> reqsToAbort.addAll(outputProcessor.processOutputs(outputs, targets, !ordered)))
                .await(FrontendAwaits.STOP_ABORT_SEND)
                .step("EngineCoreClient.abort_requests_async", () -> engineCore.abortRequestsAsync(reqsToAbort, targets));
        if (ordered) {
            coroutine.await(FrontendAwaits.AFTER_STOP_ABORT_SEND).step("OutputProcessor._finish_request", () -> outputProcessor.finishRequests(reqsToAbort));
        }
        return coroutine.returning(outputs::size);
    }

    private void collect(List<String> found, List<String> ids, Map<String, Long> targets) {
        recordTargets(found, targets);
        ids.addAll(found);
    }

    /** Detector-only: which frontend request each id names right now. */
    private void recordTargets(List<String> requestIds, Map<String, Long> targets) {
        for (String id : requestIds) {
            RequestState state = outputProcessor.getRequestState(id);
            if (state != null) {
                targets.put(id, state.arrivalTime());
            }
        }
    }
}
