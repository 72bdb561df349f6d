package vllmrace.races.frontend;

import java.util.ArrayList;
import java.util.List;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.FrontendAwaits;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.races.Clean;
import vllmrace.races.Ending;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * CollectorMergesChunkBoundary: a streaming-input session's chunk ends with a finish reason on an output that is not
 * final; when EngineCore's next output reaches the output handler before {@code generate()} took that one,
 * {@code RequestOutputCollector.put} merges the two and {@code RequestOutput.add} overwrites the finish reason: the
 * caller sees two chunks' replies glued together and counts one chunk fewer than it sent.
 *
 * <p><b>Upstream.</b> PR #53861 (open), "Harden streaming-input session lifecycle", its bug 1: "RequestOutputCollector
 * merges DELTA outputs when the producer runs ahead of the consumer, and RequestOutput.add() overwrites finish_reason ...
 * the per-chunk boundary is exactly such a transient finish_reason on a non-finished output". output_processor.py@d0782260
 * {@code RequestOutputCollector.put}: {@code if self.output is None ...: self.output = output} else
 * {@code self.output.add(output, aggregate=self.aggregate)}; vllm/outputs.py {@code RequestOutput.add}:
 * {@code completion.finish_reason = next_completion.finish_reason} (CUMULATIVE replaces the completion: the same loss).
 * A chunk boundary: the scheduler captures {@code finish_reason} before {@code _handle_stopped_request} starts the queued
 * next chunk, and {@code process_outputs} sets {@code request_output.finished = False} for a streaming-input request. The
 * PR makes the collector a small deque that never merges into an entry that is finished or carries a finish reason
 * ({@code COLLECTOR_KEEPS_BOUNDARIES}).
 *
 * <p><b>Set-up and actors.</b> Session X (streaming input, #28973) with chunk c1 of {@code c1Tokens} tokens (default 1)
 * and chunk c2 of 2 tokens, both sent before c1 ends; EngineCore has run c1 to its end, so c1's outputs, the last one
 * carrying the boundary, wait on the output socket. Actor 1: EngineCore's next busy-loop iteration (c2's first token).
 * Actor 2: the frontend: the output handler's pass (every batch waiting), then {@code generate()}'s take. Arbiter:
 * EngineCore runs the session to its end, one output handler pass and one take per iteration, then FE3 and FE5.
 *
 * <pre>
 *   actor 1: EngineCore                           actor 2: frontend (output handler, generate())
 *   1. busy loop: c2's first token on the wire
 *                                                 2. output handler: get_output_async -> c1's last output and c2's first
 *                                                    process_outputs: put(o1 "length", not finished): the slot holds o1
 *                                                    put(o2): slot.add(o2): finish_reason = None, boundary gone
 *                                                 3. generate(): get -> o1+o2 (no boundary)
 *   arbiter: c2 ends (final); the caller counted 0 of 1 boundaries
 * </pre>
 *
 * <p>With the frontend first, its pass takes only c1's outputs, {@code generate()} takes the boundary, and c2's first
 * output lands in an empty slot: the window is EngineCore's next output arriving before the caller's take.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: its window is in the frontend, whatever the number of batches
 * in flight.
 *
 * <p><b>Yields.</b> It needs no yield inside a frontend coroutine: the output handler does not suspend while a batch
 * waits ({@code get_output_async} on a non-empty queue), so when c2's output is already there it is processed in the same
 * turn; otherwise the handler suspends and {@code generate()} runs.
 *
 * <p><b>Invariant</b> (FE5 of lifecycle §5): every chunk boundary of a streaming-input session reaches the caller as a
 * boundary.
 *
 * <p><b>Verdicts.</b> Reported ({@code COLLECTOR_KEEPS_BOUNDARIES} off): EngineCore first, the boundary is merged away.
 * Fixed: never. vLLM main: racy (#53861 is open).
 */
public final class CollectorMergesChunkBoundaryScenario extends FrontendScenario {
    /** c2's tokens: its first output has no boundary, its last is final. */
    static final int C2_TOKENS = 2;
    private static final int SETTLE_ITERATIONS = 8;

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("generate() took c1's boundary on its own; c2's outputs followed it; the caller got one final output")
        BOUNDARY_SEEN,
        @Violating(value = "c2's first output was merged into c1's boundary output before generate() took it: "
                + "RequestOutput.add overwrote the finish reason, the caller counted one chunk fewer than it sent",
                detectors = {ViolationKind.CHUNK_BOUNDARY_LOST}) BOUNDARY_MERGED;
    }

    private final RequestOutputCollector queue;
    private final List<RequestOutputCollector.Output> taken = new ArrayList<>();

    /**
     * The scenario at one point of its family: {@code c1Tokens}, c1's budget (default 1); {@code priorUse} 1: an earlier
     * session under X was served to its end first (the client id reused).
     */
    public CollectorMergesChunkBoundaryScenario(FixSet fixes, Configuration config, Params p) {
        super(new VllmInstance(fixes, config));
        int c1 = p.get("c1Tokens", 1, 1);
        if (p.get("priorUse", 0, 0) == 1) {
            RequestOutputCollector prior = vllm.asyncLlm().addStreamingRequest(REQUEST_ID, 1, 1).run().join();
            for (int i = 0; i < 2; i++) {
                vllm.engineCore().runBusyLoopOnce();
                vllm.asyncLlm().outputHandler().run();
                while (prior.getNowait() != null) {
                    // the earlier caller takes each output as it comes
                }
            }
            requireSetUp(prior.finished() && vllm.outputProcessor().requestStatesSnapshot().isEmpty(), "the earlier session under X did not end");
        }
        queue = vllm.asyncLlm().addStreamingRequest(REQUEST_ID, c1, C2_TOKENS).run().join();
        for (int i = 0; i < c1; i++) {
            vllm.engineCore().runBusyLoopOnce(); // c1's tokens, its last one the boundary, wait on the output socket
        }
        Coroutine<Void> engineCore = vllm.asyncLlm().engineCoreIterations(1, () -> vllm.engineCore().runBusyLoopOnce());
        Coroutine<Void> frontend = Coroutine.sequence("frontend: output_handler, generate()", vllm.asyncLlm().outputHandler(),
                FrontendAwaits.HANDLER_WAITS_FOR_OUTPUTS, vllm.asyncLlm().takeOutputs(queue, 1, taken));
        actors(engineCore, frontend);
    }

    /**
     * The session runs to its end, the caller taking each output before the next iteration; then FE5 on the caller's
     * collector and every detector at quiescence.
     */
    @Override
    protected void settle() {
        drain();
        for (int i = 0; i < SETTLE_ITERATIONS && !queue.finished(); i++) {
            vllm.engineCore().runBusyLoopOnce();
            drain();
        }
        vllm.engineCore().processInputQueue();
        vllm.checkCollector(queue);
        vllm.checkQuiescence();
    }

    private void drain() {
        vllm.asyncLlm().outputHandler().run();
        for (RequestOutputCollector.Output out = queue.getNowait(); out != null; out = queue.getNowait()) {
            taken.add(out);
        }
    }

    /** What the caller took, in order (tests). */
    public List<RequestOutputCollector.Output> taken() {
        return List.copyOf(taken);
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.BOUNDARY_SEEN)
                .and("the caller took c1's boundary and one final output", () -> queue.boundariesTaken() == 1 && queue.numFinalOutputs() == 1));
    }
}
