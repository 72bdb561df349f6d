package vllmrace.model.frontend;

import java.util.Objects;

/**
 * Mirrors {@code vllm/v1/engine/output_processor.py}, {@code RequestState}: the frontend's record of one
 * engine-side request. {@code requestId} is the id EngineCore sees (the internal id with #27987),
 * {@code externalReqId} the caller's; {@code parentReq} / {@code requestIndex} are set for an {@code n > 1} child.
 * {@code arrivalTime} identifies the frontend request (detector use: matching it to the engine's).
 * The detokenizer is reduced to a token count checked against the stop rule of {@link SamplingParams}.
 *
 * <p>Mutated only under {@link OutputProcessor}'s lock.
 */
public final class RequestState {
    private final String requestId;
    private final String externalReqId;
    private final long arrivalTime;
    private final RequestOutputCollector queue;
    private final ParentRequest parentReq;
    private final int requestIndex;
    private final int stopAfterTokens;
    private int numOutputTokens;
    private boolean finishedInFrontend;
    /** {@code input_chunk_queue}: a streaming-input session's chunks still to come (0 for every other request). */
    private int inputChunksQueued;

    RequestState(String requestId, String externalReqId, long arrivalTime, RequestOutputCollector queue,
                 ParentRequest parentReq, int requestIndex, int stopAfterTokens) {
        this.requestId = Objects.requireNonNull(requestId, "requestId");
        this.externalReqId = Objects.requireNonNull(externalReqId, "externalReqId");
        this.arrivalTime = arrivalTime;
        this.queue = Objects.requireNonNull(queue, "queue");
        this.parentReq = parentReq;
        this.requestIndex = requestIndex;
        this.stopAfterTokens = stopAfterTokens;
    }

    public String requestId() {
        return requestId;
    }

    public String externalReqId() {
        return externalReqId;
    }

    public long arrivalTime() {
        return arrivalTime;
    }

    public RequestOutputCollector queue() {
        return queue;
    }

    /** {@code parent_req}, or null for {@code n == 1}. */
    public ParentRequest parentReq() {
        return parentReq;
    }

    public int requestIndex() {
        return requestIndex;
    }

    public int numOutputTokens() {
        return numOutputTokens;
    }

    /** Detokenizes {@code newTokens}; true when the stop string now appears (the frontend finishes the request). */
    boolean detokenize(int newTokens) {
        numOutputTokens += newTokens;
        return stopAfterTokens > 0 && numOutputTokens >= stopAfterTokens;
    }

    /**
     * True between a frontend-detected finish and the removal of this state under {@link
     * vllmrace.model.fix.Fix#ORDERED_FINISH_ABORT} (the ABORT is being sent): further outputs are dropped.
     */
    public boolean finishedInFrontend() {
        return finishedInFrontend;
    }

    void markFinishedInFrontend() {
        finishedInFrontend = true;
    }

    /** Whether this is a streaming-input session with a chunk still queued: a finish reason then ends a chunk, not it. */
    public boolean streamingInput() {
        return inputChunksQueued > 0;
    }

    void queueInputChunks(int chunks) {
        inputChunksQueued = chunks;
    }

    /** {@code input_chunk_queue.popleft()} and {@code apply_streaming_update}: the next chunk is the current one. */
    void nextInputChunk() {
        inputChunksQueued--;
    }

    @Override
    public String toString() {
        return requestId + "@" + arrivalTime;
    }
}
