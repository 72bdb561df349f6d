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
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * Mirrors {@code vllm/v1/engine/async_llm.py}, {@code AsyncLLM}: {@code add_request} / {@code _add_request},
 * {@code abort}, and one pass of the {@code output_handler} loop. Each method returns the upstream coroutine
 * as a {@link Coroutine} whose steps end exactly where upstream {@code await}s.
 */
public final class AsyncLlm {
    private final FixSet fixes;
    private final EventLoop loop;
    private final OutputProcessor outputProcessor;
    private final EngineCoreClient engineCore;
    private long arrivalClock;

    public AsyncLlm(FixSet fixes, EventLoop loop, OutputProcessor outputProcessor, EngineCoreClient engineCore) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.loop = Objects.requireNonNull(loop, "loop");
        this.outputProcessor = Objects.requireNonNull(outputProcessor, "outputProcessor");
        this.engineCore = Objects.requireNonNull(engineCore, "engineCore");
    }

    /**
     * {@code AsyncLLM.add_request} → {@code _add_request}:
     * <ol>
     *   <li>{@code output_processor.add_request(req)} (raises if the id is running);</li>
     *   <li>{@code await engine_core.add_request_async(req)}: ADD on the wire.</li>
     * </ol>
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     */
    public Coroutine<RequestOutputCollector> addRequest(String requestId, int maxTokens) {
        InvalidRequestIdException.check("AsyncLLM.add_request", requestId);
        if (maxTokens <= 0) {
            throw new IllegalArgumentException("AsyncLLM.add_request: max_tokens must be positive, got " + maxTokens);
        }
        EngineCoreRequest[] request = new EngineCoreRequest[1];
        RequestOutputCollector[] queue = new RequestOutputCollector[1];
        return Coroutine.builder(loop, "add_request(" + requestId + ")")
                .step("OutputProcessor.add_request", () -> {
                    request[0] = new EngineCoreRequest(requestId, ++arrivalClock, maxTokens);
                    queue[0] = outputProcessor.addRequest(request[0]);
                })
                .step("EngineCoreClient.add_request_async", () -> engineCore.addRequestAsync(request[0]))
                .returning(() -> queue[0]);
    }

    /**
     * {@code AsyncLLM.abort}. As reported (#15326): drop frontend state, then {@code await} the ABORT send:
     * in that window a re-add of the id passes the "already running" check. With {@link Fix#ORDERED_ABORT}:
     * compute the ids without dropping state, send ABORT, and only then drop state.
     * Aborting an id the frontend does not track is a no-op (upstream: the request may just have finished).
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     */
    public Coroutine<List<String>> abort(String requestId) {
        InvalidRequestIdException.check("AsyncLLM.abort", requestId);
        List<String> ids = new ArrayList<>();
        Map<String, Long> targets = new LinkedHashMap<>();
        Coroutine.Builder coroutine = Coroutine.builder(loop, "abort(" + requestId + ")");
        if (fixes.isOn(Fix.ORDERED_ABORT)) {
            coroutine
                    .step("OutputProcessor.flatten_req_to_abort", () -> collect(outputProcessor.flattenReqToAbort(List.of(requestId)), ids, targets))
                    .step("EngineCoreClient.abort_requests_async", () -> engineCore.abortRequestsAsync(ids, targets))
                    .step("OutputProcessor.abort_requests", () -> outputProcessor.abortRequests(ids));
        } else {
            coroutine
                    .step("OutputProcessor.abort_requests", () -> {
                        recordTargets(List.of(requestId), targets);
                        ids.addAll(outputProcessor.abortRequests(List.of(requestId)));
                    })
                    .step("EngineCoreClient.abort_requests_async", () -> engineCore.abortRequestsAsync(ids, targets));
        }
        return coroutine.returning(() -> List.copyOf(ids));
    }

    /**
     * One pass of {@code AsyncLLM._run_output_handler}'s loop:
     * <ol>
     *   <li>{@code outputs = await engine_core.get_output_async()};</li>
     *   <li>{@code output_processor.process_outputs(outputs)};</li>
     *   <li>{@code await engine_core.abort_requests_async(reqs_to_abort)}.</li>
     * </ol>
     *
     * @return the number of outputs processed
     */
    public Coroutine<Integer> outputHandler() {
        List<EngineCoreOutput> outputs = new ArrayList<>();
        List<String> reqsToAbort = new ArrayList<>();
        Map<String, Long> targets = new LinkedHashMap<>();
        return Coroutine.builder(loop, "output_handler")
                .step("EngineCoreClient.get_output_async", () -> outputs.addAll(engineCore.getOutputAsync()))
                .step("OutputProcessor.process_outputs", () -> {
                    List<String> finishedInFrontend = outputProcessor.processOutputs(outputs);
                    reqsToAbort.addAll(finishedInFrontend);
                })
                .step("EngineCoreClient.abort_requests_async", () -> engineCore.abortRequestsAsync(reqsToAbort, targets))
                .returning(outputs::size);
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

    public OutputProcessor outputProcessor() {
        return outputProcessor;
    }
}
