package vllmrace.lincheck.scheduler;

import java.util.List;
import java.util.TreeSet;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.SchedulerOutput;
import vllmrace.races.scheduler.EngineCoreRig;

/**
 * EngineCore's scheduler-facing operations over one fresh model ({@link EngineCoreRig}: async scheduling with a
 * batch queue of 2, a KV block pool, a connector), for Lincheck's linearizability check against
 * {@link SchedulerSpecification}. Two requests: {@code r0} is local and async-saved when it finishes (an
 * LMCache-like connector), {@code r1} has its prompt on a remote prefill instance (a NIXL-like decode-side
 * async load; never saved). Each operation is one atomic step of the busy loop's serialisation:
 * <ul>
 *   <li>{@link #addRequest}: the client's ADD (each id once: internal ids are unique since #27987);</li>
 *   <li>{@link #abort}: the client's ABORT reaches the input thread ({@code input_queue}, {@code aborts_queue});</li>
 *   <li>{@link #busyLoopStep}: the busy loop's next step, in its program order: {@code _process_input_queue},
 *       then {@code schedule()} (+ execute), then, if the loop blocks, the oldest step's result (the worker's
 *       connector reports finished transfers), {@code _process_aborts_queue} and {@code update_from_output};</li>
 *   <li>{@link #transfersComplete}: the worker's in-flight loads and saves complete.</li>
 * </ul>
 * {@link #invariantsHold()} validates SC1–SC5 (every detector clean, and no finished request left in
 * {@code requests} without a releasing event) after every part of a scenario.
 *
 * <p>Lincheck builds instances with the no-arg constructor; {@link #configure} selects the fixes.
 */
@Param(name = "id", gen = IntGen.class, conf = "0:1")
public class SchedulerOperations {
    static final int PROMPT_TOKENS = 4;
    static final int MAX_TOKENS = 1;
    static final int NUM_GPU_BLOCKS = 8;
    static final String REMOTE_ID = "r1";
    private static volatile FixSet fixes = FixSet.all();

    private enum Next { INPUT, SCHEDULE, UPDATE }

    private final EngineCoreRig rig;
    private final boolean[] added = new boolean[2];
    private Next next = Next.INPUT;
    private boolean blocks;

    public SchedulerOperations() {
        RunRecorder.countInvocation();
        rig = new EngineCoreRig(fixes, SavePolicy.ALWAYS, NUM_GPU_BLOCKS);
        rig.connector().remotePrefill(REMOTE_ID, PROMPT_TOKENS);
        rig.connector().savePolicy(REMOTE_ID, SavePolicy.NEVER);
    }

    public static void configure(FixSet fixes) {
        SchedulerOperations.fixes = fixes;
    }

    static String requestId(int id) {
        return "r" + id;
    }

    /** The client's ADD on the input socket; false (nothing sent) for an id it already added. */
    @Operation
    public boolean addRequest(@Param(name = "id") int id) {
        boolean[] sent = new boolean[1];
        atomically("add_request(" + requestId(id) + ")", "AsyncMPClient.add_request_async", () -> {
            if (!added[id]) {
                added[id] = true;
                rig.sendAdd(requestId(id), PROMPT_TOKENS, MAX_TOKENS);
                sent[0] = true;
            }
        });
        return sent[0];
    }

    /** The client's ABORT reaches EngineCore's input thread (the client aborts only ids it added). */
    @Operation
    public void abort(@Param(name = "id") int id) {
        String requestId = requestId(id);
        atomically("abort(" + requestId + ")", "EngineCoreProc.process_input_sockets: ABORT", () -> {
            if (added[id]) {
                rig.abortArrives(requestId);
            }
        });
    }

    /** The busy loop's next step; returns what it did that a client or worker can see. */
    @Operation(nonParallelGroup = "busyLoop")
    public String busyLoopStep() {
        String[] result = new String[1];
        atomically("EngineCore busy loop", "run_busy_loop: " + next, () -> result[0] = runNextStep());
        return result[0];
    }

    private String runNextStep() {
        switch (next) {
            case INPUT -> {
                rig.engineCore().processInputQueue();
                next = Next.SCHEDULE;
                return "input";
            }
            case SCHEDULE -> {
                int before = rig.engineCore().batchQueueSnapshot().size();
                blocks = rig.engineCore().scheduleBatch();
                next = Next.UPDATE;
                List<SchedulerOutput> queue = rig.engineCore().batchQueueSnapshot();
                return queue.size() > before ? "schedule " + new TreeSet<>(queue.get(0).numScheduledTokens().keySet()) : "schedule -";
            }
            default -> {
                next = Next.INPUT;
                if (!blocks) {
                    return "update -";
                }
                rig.engineCore().processOldestBatch();
                TreeSet<String> finished = new TreeSet<>();
                for (EngineCoreOutput output : rig.collectOutputs()) {
                    if (output.finished()) {
                        finished.add(output.requestId() + ":" + output.finishReason());
                    }
                }
                return "update " + finished;
            }
        }
    }

    /** The worker: every in-flight async load and save completes (reported by the next popped step). */
    @Operation
    public void transfersComplete() {
        atomically("worker", "KV transfers complete", () -> rig.connector().finishInFlightTransfers());
    }

    @Validate
    public void invariantsHold() {
        // a request whose #46289 reclaim timer runs will be freed when it expires: not stuck, though later than at once
        List<String> stuck = rig.scheduler().unreleasableDelayFreed().stream().filter(id -> !rig.scheduler().reclaimPending(id)).toList();
        if (!rig.violations().isEmpty() || !stuck.isEmpty()) {
            throw new IllegalStateException("invariant broken: " + rig.violations()
                    + (stuck.isEmpty() ? "" : " SC5: finished, delay-freed and nothing will release " + stuck));
        }
    }

    private void atomically(String task, String step, Runnable body) {
        RuntimeException failure = rig.atomically(task, step, body);
        if (failure != null) {
            throw failure;
        }
    }
}
