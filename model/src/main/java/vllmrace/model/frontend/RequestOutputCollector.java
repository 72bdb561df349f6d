package vllmrace.model.frontend;

import java.util.ArrayDeque;
import java.util.Deque;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Mirrors {@code vllm/v1/engine/output_processor.py}@d0782260, {@code RequestOutputCollector}: the mailbox a
 * {@code generate()} caller waits on. Upstream keeps one slot: {@code put} sets it when empty and otherwise merges the new
 * output into it ({@code self.output.add(output, aggregate=...)}, which overwrites {@code finish_reason}); {@code get}
 * takes it. With {@link Fix#COLLECTOR_KEEPS_BOUNDARIES} (#53861, proposed) the slot is a small deque that never merges
 * into an entry that is finished or carries a finish reason. The model keeps what a caller can tell: the outputs, whether
 * a final one arrived (FE3), and a streaming-input session's chunk boundaries (an output with a finish reason that is not
 * final) put, taken and erased by a merge (FE5).
 */
public final class RequestOutputCollector {
    /** One entry: tokens, and the finish reason and finished flag of the last output merged into it. */
    public record Output(int newTokens, String finishReason, boolean finished) {
        /** A chunk boundary of a streaming-input session: a finish reason on an output that is not final. */
        public boolean boundary() {
            return finishReason != null && !finished;
        }

        /** {@code RequestOutput.add(next, aggregate=True)}: tokens concatenated, {@code finish_reason} overwritten. */
        Output add(Output next) {
            return new Output(newTokens + next.newTokens, next.finishReason, finished || next.finished);
        }
    }

    private final boolean keepsBoundaries;
    private final Deque<Output> slot = new ArrayDeque<>();
    private String requestId;
    private int numOutputs;
    private int numFinalOutputs;
    private String finishReason;
    private int boundariesPut;
    private int boundariesTaken;
    private int boundariesErased;

    /** A collector as upstream has it (one slot, merging). */
    public RequestOutputCollector() {
        this(FixSet.none());
    }

    /** A collector under {@code fixes}: the deque of #53861 with {@link Fix#COLLECTOR_KEEPS_BOUNDARIES}. */
    public RequestOutputCollector(FixSet fixes) {
        this.keepsBoundaries = fixes.isOn(Fix.COLLECTOR_KEEPS_BOUNDARIES);
    }

    synchronized void put(int newTokens, String finishReason) {
        put(newTokens, finishReason, finishReason != null);
    }

    /** {@code put}: a final output when {@code finished}; a chunk boundary when it carries a reason and is not final. */
    synchronized void put(int newTokens, String finishReason, boolean finished) {
        UpstreamPins.enter(UpstreamPin.REQUEST_OUTPUT_COLLECTOR_PUT);
        Output output = new Output(newTokens, finishReason, finished);
        numOutputs++;
        if (finished) {
            numFinalOutputs++;
            this.finishReason = finishReason;
        }
        if (output.boundary()) {
            boundariesPut++;
        }
        Output tail = slot.peekLast();
        if (tail == null || (keepsBoundaries && (tail.finished() || tail.finishReason() != null))) {
            slot.addLast(output);
        } else {
            if (tail.boundary() && !output.boundary()) {
                boundariesErased++; // RequestOutput.add overwrites the boundary's finish_reason before anyone took it
            }
            slot.pollLast();
            slot.addLast(tail.add(output));
        }
    }

    /**
     * {@code get_nowait}: the caller ({@code generate()}'s loop) takes the oldest waiting output, or null when none waits
     * (upstream it would then {@code await q.get()}).
     */
    public synchronized Output getNowait() {
        Output output = slot.pollFirst();
        if (output != null && output.boundary()) {
            boundariesTaken++;
        }
        return output;
    }

    /** Chunk boundaries put, taken by the caller, and erased by a merge before the caller took them. */
    public synchronized int boundariesPut() {
        return boundariesPut;
    }

    public synchronized int boundariesTaken() {
        return boundariesTaken;
    }

    public synchronized int boundariesErased() {
        return boundariesErased;
    }

    /** Outputs waiting in the slot (1 at most upstream; the deque may hold more). */
    public synchronized int waiting() {
        return slot.size();
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
