package vllmrace.model.frontend;

import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Mirrors {@code vllm/v1/engine/output_processor.py}, {@code RequestOutputCollector}: the mailbox a
 * {@code generate()} caller waits on. The model keeps what a caller can tell: how many outputs arrived and
 * whether a final one did (FE3: exactly one final output per collector).
 */
public final class RequestOutputCollector {
    private String requestId;
    private int numOutputs;
    private int numFinalOutputs;
    private String finishReason;

    synchronized void put(int newTokens, String finishReason) {
        UpstreamPins.enter(UpstreamPin.REQUEST_OUTPUT_COLLECTOR_PUT);
        numOutputs++;
        if (finishReason != null) {
            numFinalOutputs++;
            this.finishReason = finishReason;
        }
    }

    /** Set once by {@code add_request}, when the internal id is assigned. */
    synchronized void bindRequestId(String id) {
        requestId = id;
    }

    /**
     * {@code q.request_id}: the internal id of the request this collector belongs to (the parent's for {@code n > 1}),
     * what {@code generate()}'s cancellation aborts ({@code abort(q.request_id, internal=True)}); null before the
     * request's {@code add_request} step ran.
     */
    public synchronized String requestId() {
        return requestId;
    }

    public synchronized int numOutputs() {
        return numOutputs;
    }

    public synchronized boolean finished() {
        return numFinalOutputs > 0;
    }

    public synchronized int numFinalOutputs() {
        return numFinalOutputs;
    }

    public synchronized String finishReason() {
        return finishReason;
    }
}
