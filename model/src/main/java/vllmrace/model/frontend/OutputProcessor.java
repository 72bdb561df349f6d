package vllmrace.model.frontend;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.EngineCoreRequest;

/**
 * Mirrors {@code vllm/v1/engine/output_processor.py}, {@code OutputProcessor} (March 2025, the version
 * #15326 was written against): {@code request_states} is the frontend's visible set.
 *
 * <p>Called only from {@link AsyncLlm} coroutine steps, i.e. under the event loop; synchronized as well so
 * a test can read it from any thread.
 */
public final class OutputProcessor {
    private final Map<String, RequestState> requestStates = new LinkedHashMap<>();
    private long droppedOutputs;

    /**
     * {@code OutputProcessor.add_request}.
     *
     * @throws RequestAlreadyRunningException if {@code request_states} holds the id (state unchanged)
     */
    public synchronized RequestOutputCollector addRequest(EngineCoreRequest request) {
        if (requestStates.containsKey(request.requestId())) {
            throw new RequestAlreadyRunningException(request.requestId());
        }
        RequestOutputCollector queue = new RequestOutputCollector();
        requestStates.put(request.requestId(), new RequestState(request.requestId(), request.arrivalTime(), queue));
        return queue;
    }

    /**
     * {@code OutputProcessor.abort_requests}: pops the states and returns the ids to abort in EngineCore. An id
     * the frontend does not track is skipped: a documented no-op, since a request may finish (or be aborted
     * twice) while a client's abort is in flight.
     */
    public synchronized List<String> abortRequests(Collection<String> requestIds) {
        List<String> toAbort = new ArrayList<>();
        for (String id : requestIds) {
            RequestState state = requestStates.remove(id);
            if (state != null) {
                state.queue().put(0, "abort");
                toAbort.add(id);
            }
        }
        return toAbort;
    }

    /**
     * {@code flatten_req_to_abort} (#15326): the ids {@link #abortRequests} would abort, WITHOUT removing state,
     * so the frontend keeps rejecting a re-add until ABORT is on the wire.
     */
    public synchronized List<String> flattenReqToAbort(Collection<String> requestIds) {
        List<String> toAbort = new ArrayList<>();
        for (String id : requestIds) {
            if (requestStates.containsKey(id)) {
                toAbort.add(id);
            }
        }
        return toAbort;
    }

    /**
     * {@code OutputProcessor.process_outputs}: delivers outputs to their collectors and drops the state of
     * finished requests. An output for an id the frontend does not track is dropped silently, as upstream
     * does for an already-aborted request (counted in {@link #droppedOutputs()}).
     *
     * @return {@code reqs_to_abort}: requests the frontend finished that EngineCore has not (empty until stop
     *         strings are modelled)
     */
    public synchronized List<String> processOutputs(List<EngineCoreOutput> engineCoreOutputs) {
        for (EngineCoreOutput output : engineCoreOutputs) {
            RequestState state = requestStates.get(output.requestId());
            if (state == null) {
                droppedOutputs++;
                continue;
            }
            state.queue().put(output.newTokens(), output.finishReason());
            if (output.finished()) {
                requestStates.remove(output.requestId());
            }
        }
        return List.of();
    }

    /** The frontend's request for {@code requestId}, or null. */
    public synchronized RequestState getRequestState(String requestId) {
        return requestStates.get(requestId);
    }

    public synchronized List<RequestState> requestStatesSnapshot() {
        return List.copyOf(requestStates.values());
    }

    public synchronized long droppedOutputs() {
        return droppedOutputs;
    }
}
