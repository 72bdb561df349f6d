package vllmrace.model.frontend;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Mirrors {@code vllm/v1/engine/output_processor.py}, {@code OutputProcessor}: {@code request_states} (keyed by the
 * id EngineCore sees) is the frontend's visible set; {@code parent_requests} holds the {@link ParentRequest}s of
 * {@code n > 1} requests; {@code external_req_ids} maps a caller's id to the internal ids it resolves to (#27987;
 * without unique internal ids every internal id is its external id, or {@code "{idx}_{external}"} for a child).
 *
 * <p>Functions: {@code add_request}, {@code abort_requests} (by external or internal id, a parent aborting all of
 * its children), {@code process_outputs} (stop strings detected here: {@code reqs_to_abort}), {@code _finish_request}
 * (drops a state, fixes {@code external_req_ids}, and drops a parent with its last child), plus #15326's
 * {@code flatten_req_to_abort}.
 *
 * <p>{@code add_request} refuses only an internal id already in {@code request_states} (early-2025 upstream,
 * commit 0015f3f6: {@code ValueError("Request id ... already running.")}). Without unique internal ids the internal
 * id is the caller's, so a tracked id cannot be reused; with them (#27987, output_processor.py at d0782260) a new
 * request under a tracked external id is accepted and {@code external_req_ids[ext]} lists both, and an abort by that
 * external id aborts both. Simplified: upstream today sends a colliding internal id (possible only with
 * {@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION}) to {@code _update_streaming_request_state}; the model, without
 * resumable requests, refuses it. {@code abort_requests} of children (by the external id, or a child's internal id)
 * pops their states and never {@code parent_requests} (#51629: the parent stays for the life of the engine, FE4, see
 * {@link #leakedParentRequests()}); an abort by the parent's own id, and a normal finish, drop the parent with its last
 * child. With {@link Fix#PARENT_RELEASED_ON_ABORT} (#51629, proposed) the children's abort drops it too.
 *
 * <p>Called only from {@link AsyncLlm} coroutine steps, i.e. under the event loop; synchronized as well so a test
 * can read it from any thread.
 */
public final class OutputProcessor {
    /** {@code FinishReason.STOP}: a stop string the frontend's detokenizer found. */
    public static final String FINISH_REASON_STOP = "stop";
    /** {@code FinishReason.ABORT}. */
    public static final String FINISH_REASON_ABORT = "abort";

    private final FixSet fixes;
    private final Map<String, RequestState> requestStates = new LinkedHashMap<>();
    private final Map<String, ParentRequest> parentRequests = new LinkedHashMap<>();
    private final Map<String, List<String>> externalReqIds = new LinkedHashMap<>();
    private long droppedOutputs;

    /** An output processor with every fix on (the frontend unit tests' default). */
    public OutputProcessor() {
        this(FixSet.all());
    }

    /** An output processor under {@code fixes} (it reads {@link Fix#PARENT_RELEASED_ON_ABORT}). */
    public OutputProcessor(FixSet fixes) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
    }

    /**
     * {@code OutputProcessor.add_request(request, prompt, parent_req, request_index, queue)}.
     *
     * @param externalReqId   the caller's id
     * @param parentReq       the parent of an {@code n > 1} child, or null
     * @param stopAfterTokens the stop rule of {@link SamplingParams} (0: none)
     * @throws RequestAlreadyRunningException if {@code request_states} holds the internal id (state unchanged); a
     *     tracked external id is fine: {@code external_req_ids} lists every internal id under it
     * @throws InvalidRequestIdException for a null or empty external id; NullPointerException for a null request or queue
     */
    public synchronized void addRequest(EngineCoreRequest request, String externalReqId, ParentRequest parentReq,
                                        int requestIndex, RequestOutputCollector queue, int stopAfterTokens) {
        UpstreamPins.enter(UpstreamPin.OUTPUT_PROCESSOR_ADD_REQUEST);
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(queue, "queue");
        InvalidRequestIdException.check("OutputProcessor.add_request", externalReqId);
        if (stopAfterTokens < 0) {
            throw new IllegalArgumentException("OutputProcessor.add_request: stopAfterTokens must be >= 0, got " + stopAfterTokens);
        }
        if (requestStates.containsKey(request.requestId())) {
            throw new RequestAlreadyRunningException(request.requestId());
        }
        RequestState state = new RequestState(request.requestId(), externalReqId, request.arrivalTime(),
                queue, parentReq, requestIndex, stopAfterTokens);
        state.queueInputChunks(request.nextChunks().size()); // a streaming-input session's later chunks
        requestStates.put(request.requestId(), state);
        externalReqIds.computeIfAbsent(externalReqId, k -> new ArrayList<>()).add(request.requestId());
        if (parentReq != null) {
            parentRequests.put(parentReq.requestId(), parentReq);
        }
    }

    /**
     * Resolves ids to the internal ids of tracked requests: an external id through {@code external_req_ids}, an
     * internal id as itself, a parent id to its live children. Unknown ids resolve to nothing.
     */
    private List<String> resolve(Collection<String> requestIds, boolean internalIds) {
        Objects.requireNonNull(requestIds, "requestIds");
        Set<String> resolved = new LinkedHashSet<>();
        for (String id : requestIds) {
            InvalidRequestIdException.check("OutputProcessor.abort_requests", id);
            List<String> internal = internalIds ? null : externalReqIds.get(id);
            if (internal != null) {
                resolved.addAll(internal);
            } else if (requestStates.containsKey(id)) {
                resolved.add(id);
            } else if (parentRequests.containsKey(id)) {
                resolved.addAll(parentRequests.get(id).childRequests());
            }
        }
        resolved.retainAll(requestStates.keySet());
        return new ArrayList<>(resolved);
    }

    /**
     * {@code OutputProcessor.abort_requests}: resolves the ids (external, internal or parent), pops each state, puts
     * a final {@code FinishReason.ABORT} output into its collector (for a child: once, with the parent's last child),
     * and returns the internal ids to abort in EngineCore. An id the frontend does not track is skipped: a documented
     * no-op, since a request may finish (or be aborted twice) while a client's abort is in flight.
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     */
    public synchronized List<String> abortRequests(Collection<String> requestIds) {
        return abortRequests(requestIds, false);
    }

    /**
     * {@code abort_requests(request_ids, internal)}: as {@link #abortRequests(Collection)}; with {@code internal} the
     * ids are internal ones ({@code generate()}'s cancellation aborts {@code q.request_id} so): never looked up in
     * {@code external_req_ids}, so a parent's own id takes the branch that drops the parent with its children.
     *
     * @throws InvalidRequestIdException for a null or empty id, before any state changes
     */
    public synchronized List<String> abortRequests(Collection<String> requestIds, boolean internal) {
        UpstreamPins.enter(UpstreamPin.OUTPUT_PROCESSOR_ABORT_REQUESTS);
        List<String> toAbort = resolve(requestIds, internal);
        List<String> parentIds = new ArrayList<>(); // the elif branch: an id that is a parent's own, not a state's
        for (String id : requestIds) {
            if ((internal || !externalReqIds.containsKey(id)) && !requestStates.containsKey(id) && parentRequests.containsKey(id)) {
                parentIds.add(id);
            }
        }
        for (String id : toAbort) {
            RequestState state = requestStates.get(id);
            if (finishRequest(state, fixes.isOn(Fix.PARENT_RELEASED_ON_ABORT))) {
                state.queue().put(0, FINISH_REASON_ABORT);
            }
        }
        parentIds.forEach(parentRequests::remove); // self.parent_requests.pop(request_id, None)
        return toAbort;
    }

    /**
     * {@code flatten_req_to_abort} (#15326): the ids {@link #abortRequests} would abort, WITHOUT removing state,
     * so the frontend keeps rejecting a re-add until ABORT is on the wire.
     *
     * @throws InvalidRequestIdException for a null or empty id
     */
    public synchronized List<String> flattenReqToAbort(Collection<String> requestIds) {
        return resolve(requestIds, false);
    }

    /** As {@link #flattenReqToAbort(Collection)}, for internal ids ({@link #abortRequests(Collection, boolean)}). */
    public synchronized List<String> flattenReqToAbort(Collection<String> requestIds, boolean internal) {
        return resolve(requestIds, internal);
    }

    /** {@code process_outputs} without the detector's record of ABORT targets; drops frontend-finished states now. */
    public synchronized List<String> processOutputs(List<EngineCoreOutput> engineCoreOutputs) {
        return processOutputs(engineCoreOutputs, new HashMap<>(), true);
    }

    /**
     * {@code OutputProcessor.process_outputs}: detokenizes each output (the stop rule), delivers it to its
     * collector, and handles finished requests. An output for an id the frontend does not track (or whose state
     * is already finished in the frontend) is dropped silently, as upstream does for an already-aborted request
     * (counted in {@link #droppedOutputs()}).
     *
     * <p>A request the frontend finished on a stop string while EngineCore has not ({@code not
     * engine_core_output.finished}) goes to {@code reqs_to_abort}. As upstream, its state is dropped here when
     * {@code dropFrontendFinished}; otherwise ({@code ORDERED_FINISH_ABORT}) it is kept, marked finished, until
     * {@link #finishRequests} runs after the ABORT is on the wire.
     *
     * @param intendedArrivalTimes filled with the frontend request each id of {@code reqs_to_abort} names (detector use)
     * @return {@code reqs_to_abort}
     */
    public synchronized List<String> processOutputs(List<EngineCoreOutput> engineCoreOutputs, Map<String, Long> intendedArrivalTimes,
                                                    boolean dropFrontendFinished) {
        UpstreamPins.enter(UpstreamPin.OUTPUT_PROCESSOR_PROCESS_OUTPUTS);
        Objects.requireNonNull(engineCoreOutputs, "engineCoreOutputs");
        List<String> reqsToAbort = new ArrayList<>();
        for (EngineCoreOutput output : engineCoreOutputs) {
            RequestState state = requestStates.get(output.requestId());
            if (state == null || state.finishedInFrontend()) {
                droppedOutputs++;
                continue;
            }
            boolean stopStringFound = state.detokenize(output.newTokens());
            String finishReason = output.finishReason();
            if (finishReason != null && state.streamingInput()) {
                // streaming input (#28973): request_output.finished = False; a finish reason ends the chunk, the next
                // queued chunk becomes current (input_chunk_queue.popleft()), and the request runs on
                state.nextInputChunk();
                state.queue().put(output.newTokens(), finishReason, false);
                continue;
            }
            boolean finishedInFrontend = finishReason == null && stopStringFound;
            if (finishedInFrontend) {
                finishReason = FINISH_REASON_STOP;
                reqsToAbort.add(state.requestId());
                intendedArrivalTimes.put(state.requestId(), state.arrivalTime());
            }
            if (finishReason == null) {
                state.queue().put(output.newTokens(), null);
            } else if (finishedInFrontend && !dropFrontendFinished) {
                state.markFinishedInFrontend();
                state.queue().put(output.newTokens(), null);
            } else {
                state.queue().put(output.newTokens(), finishRequest(state) ? finishReason : null);
            }
        }
        return reqsToAbort;
    }

    /**
     * {@code _finish_request} for requests {@link #processOutputs} kept (finished in the frontend, ABORT now sent):
     * drops each one's state and delivers its final {@code FinishReason.STOP} output. Ids no longer tracked (a
     * client abort got there first) are skipped: a documented no-op.
     */
    public synchronized void finishRequests(Collection<String> requestIds) {
        for (String id : Objects.requireNonNull(requestIds, "requestIds")) {
            RequestState state = requestStates.get(id);
            if (state != null && state.finishedInFrontend() && finishRequest(state)) {
                state.queue().put(0, FINISH_REASON_STOP);
            }
        }
    }

    /**
     * {@code _finish_request}: pops the state, removes it from {@code external_req_ids}, and, for a child, from its
     * parent's {@code child_requests}; the parent leaves {@code parent_requests} with its last child.
     *
     * @return whether the collector's final output is due now (always for {@code n == 1}; for a child, only when it
     *     was the parent's last)
     */
    private boolean finishRequest(RequestState state) {
        return finishRequest(state, true);
    }

    /** As {@link #finishRequest(RequestState)}; {@code releaseParent} false keeps the parent in {@code parent_requests}. */
    private boolean finishRequest(RequestState state, boolean releaseParent) {
        UpstreamPins.enter(UpstreamPin.OUTPUT_PROCESSOR_FINISH_REQUEST);
        requestStates.remove(state.requestId());
        List<String> internal = externalReqIds.get(state.externalReqId());
        if (internal != null) {
            internal.remove(state.requestId());
            if (internal.isEmpty()) {
                externalReqIds.remove(state.externalReqId());
            }
        }
        ParentRequest parent = state.parentReq();
        if (parent == null) {
            return true;
        }
        ParentRequest.ChildOutputs outputs = parent.getOutputs(state.requestId(), true);
        boolean parentFinished = outputs.deliver() && outputs.parentFinished();
        if (parentFinished && releaseParent) {
            parentRequests.remove(parent.requestId());
        }
        return parentFinished;
    }

    /** The frontend's request for the internal id {@code requestId}, or null. */
    public synchronized RequestState getRequestState(String requestId) {
        return requestStates.get(requestId);
    }

    public synchronized List<RequestState> requestStatesSnapshot() {
        return List.copyOf(requestStates.values());
    }

    /** {@code parent_requests}, keyed by parent id. */
    public synchronized Map<String, ParentRequest> parentRequestsSnapshot() {
        return Map.copyOf(parentRequests);
    }

    /** {@code external_req_ids}: the internal ids each tracked external id resolves to. */
    public synchronized Map<String, List<String>> externalReqIdsSnapshot() {
        Map<String, List<String>> copy = new LinkedHashMap<>();
        externalReqIds.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        return copy;
    }

    /**
     * FE4: every parent in {@code parent_requests} has a child state in {@code request_states} (upstream drops the
     * parent with its last child); returns the parents that outlive every child state (#51629), empty when FE4 holds.
     * Holds between any two frontend steps, not only at quiescence, and also while other requests run.
     */
    public synchronized List<String> leakedParentRequests() {
        List<String> leaked = new ArrayList<>();
        parentRequests.forEach((id, parent) -> {
            if (requestStates.values().stream().noneMatch(state -> state.parentReq() == parent)) {
                leaked.add(id);
            }
        });
        return leaked;
    }

    /** Test seam (a broken model, for the FE4 detectors' own tests): forgets a state, keeping its parent. */
    synchronized void dropStateOnly(String internalId) {
        requestStates.remove(internalId);
    }

    /** Test seam (a broken model, for the FE4 detectors' own tests): forgets a parent, keeping its children's states. */
    synchronized void dropParentOnly(String parentId) {
        parentRequests.remove(parentId);
    }

    public synchronized long droppedOutputs() {
        return droppedOutputs;
    }
}
