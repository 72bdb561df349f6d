package vllmrace.lincheck.scheduler;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.SchedulerOutput;
import vllmrace.races.scheduler.EngineCoreRig;

/**
 * EngineCore's scheduler-facing operations over one fresh model ({@link EngineCoreRig}: async scheduling with a
 * batch queue of 2, a KV block pool, a connector), for Lincheck's linearizability check against
 * {@link SchedulerSpecification}. Two client ids: {@code r0} is local and async-saved when it finishes (an
 * LMCache-like connector), {@code r1} has its prompt on a remote prefill instance (a NIXL-like decode-side
 * async load; never saved). The client may resubmit an id it aborted, once: the frontend gives each ADD its engine id
 * ({@code InputProcessor.assign_request_id}: with #27987 a suffix per ADD; the same id with randomization off). Results
 * name requests as the client knows them: {@code r0} for the first ADD, {@code r0'} for the resubmission; an engine
 * id names the client's latest request under it, as the output processor routes it. Each operation is one atomic step
 * of the busy loop's serialisation:
 * <ul>
 *   <li>{@link #addRequest}: the client's ADD (a first one, or a resubmission of an id it aborted);</li>
 *   <li>{@link #abort}: the client's ABORT reaches the input thread ({@code input_queue}, {@code aborts_queue});</li>
 *   <li>{@link #busyLoopStep}: the busy loop's next step, in its program order: {@code _process_input_queue},
 *       then {@code schedule()} (+ execute), then, if the loop blocks, the oldest step's result (the worker's
 *       connector reports finished transfers), {@code _process_aborts_queue} and {@code update_from_output};</li>
 *   <li>{@link #transfersComplete}: the worker's in-flight loads and saves complete.</li>
 * </ul>
 * {@link #invariantsHold()} validates SC1–SC5 (every detector clean, and no finished request left in
 * {@code requests} without a releasing event) after every part of a scenario.
 *
 * <p>Lincheck builds instances with the no-arg constructor; {@link #configure} selects the fixes and the deployment
 * (request-id randomization, sync or async scheduling).
 */
@Param(name = "id", gen = IntGen.class, conf = "0:1")
public class SchedulerOperations {
    static final int PROMPT_TOKENS = 4;
    static final int MAX_TOKENS = 1;
    static final int NUM_GPU_BLOCKS = 8;
    static final String REMOTE_ID = "r1";
    /** ADDs per client id: the first, and one resubmission after the client aborted it. */
    static final int MAX_ADDS = 2;
    private static volatile FixSet fixes = FixSet.all();
    private static volatile Configuration configuration = Configuration.DEFAULT;

    private enum Next { INPUT, SCHEDULE, UPDATE }

    private final EngineCoreRig rig;
    private final int[] adds = new int[2];
    private final boolean[] abortedLatest = new boolean[2];
    private final Map<String, String> labels = new HashMap<>(); // engine id -> the client's latest request under it
    private Next next = Next.INPUT;
    private boolean blocks;

    public SchedulerOperations() {
        RunRecorder.countInvocation();
        rig = new EngineCoreRig(fixes, configuration, SavePolicy.ALWAYS, NUM_GPU_BLOCKS);
    }

    /** Every fix ON, the default deployment. */
    public static void configure(FixSet fixes) {
        configure(fixes, Configuration.DEFAULT);
    }

    public static void configure(FixSet fixes, Configuration configuration) {
        SchedulerOperations.fixes = fixes;
        SchedulerOperations.configuration = configuration;
    }

    static Configuration configuration() {
        return configuration;
    }

    static String requestId(int id) {
        return "r" + id;
    }

    /** How the client names its {@code nth} ADD under {@code id}: {@code r0}, then {@code r0'}. */
    static String label(int id, int nth) {
        return requestId(id) + (nth > 1 ? "'" : "");
    }

    /**
     * The client's ADD on the input socket: a first ADD, or a resubmission of an id whose latest request it aborted
     * (once); false (nothing sent) otherwise.
     */
    @Operation
    public boolean addRequest(@Param(name = "id") int id) {
        boolean[] sent = new boolean[1];
        atomically("add_request(" + requestId(id) + ")", "AsyncMPClient.add_request_async", () -> {
            if (adds[id] == 0 || (abortedLatest[id] && adds[id] < MAX_ADDS)) {
                adds[id]++;
                abortedLatest[id] = false;
                String engineId = rig.engineId(requestId(id), adds[id]);
                labels.put(engineId, label(id, adds[id]));
                if (requestId(id).equals(REMOTE_ID)) {
                    rig.connector().remotePrefill(engineId, PROMPT_TOKENS);
                    rig.connector().savePolicy(engineId, SavePolicy.NEVER);
                }
                rig.sendAdd(engineId, PROMPT_TOKENS, MAX_TOKENS);
                sent[0] = true;
            }
        });
        return sent[0];
    }

    /** The client's ABORT of its latest request under {@code id} reaches EngineCore's input thread (ids it added only). */
    @Operation
    public void abort(@Param(name = "id") int id) {
        atomically("abort(" + requestId(id) + ")", "EngineCoreProc.process_input_sockets: ABORT", () -> {
            if (adds[id] > 0) {
                abortedLatest[id] = true;
                rig.abortArrives(rig.engineId(requestId(id), adds[id]));
            }
        });
    }

    private String labelOf(String engineId) {
        return labels.getOrDefault(engineId, engineId);
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
                if (queue.size() <= before) {
                    return "schedule -";
                }
                TreeSet<String> scheduled = new TreeSet<>();
                queue.get(0).numScheduledTokens().keySet().forEach(engineId -> scheduled.add(labelOf(engineId)));
                return "schedule " + scheduled;
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
                        finished.add(labelOf(output.requestId()) + ":" + output.finishReason());
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
