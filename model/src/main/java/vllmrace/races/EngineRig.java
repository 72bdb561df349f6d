package vllmrace.races;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.connector.KvConnectorBaseV1;
import vllmrace.model.EngineProcess;
import vllmrace.model.connector.KvConnectorWorker;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.Settle;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.Scheduler;

/**
 * An EngineCore process under test as a race sees it, shared by the scheduler races' rig and the connector races' rig
 * (and through the first, the hunt and the linearizability checks): one {@link EngineProcess} (the same wiring the
 * frontend's VllmInstance stands on) with a pool of {@link #BLOCK_SIZE}-token blocks and the configuration's batch queue
 * (2 steps in flight with the AsyncScheduler, one with the sync Scheduler). A subclass brings the KV connector
 * ({@link #wire}) and says how its transfers complete and when they are idle; everything a scenario asks of the engine
 * (ADDs, tracked requests, finish reasons, detectors, settling to quiescence) is here, once.
 *
 * <p>The scenario's actors are {@link Coroutine}s on one {@link EventLoop} standing for the busy loop's serialisation:
 * everything the scheduler does runs on the busy-loop thread, so its steps never overlap.
 */
public abstract class EngineRig implements vllmrace.model.Wired {
    /** Tokens per KV block ({@link EngineProcess#BLOCK_SIZE}). */
    public static final int BLOCK_SIZE = EngineProcess.BLOCK_SIZE;
    /** Async scheduling: schedule(N+1) runs before update_from_output(N). */
    public static final int BATCH_QUEUE_SIZE = 2;

    private final EngineProcess.Builder wiring;
    private final EventLoop busyLoop;
    private EngineProcess process;
    private final Map<String, Long> arrivalTimes = new HashMap<>();
    private final Map<String, Request> tracked = new HashMap<>();
    private final Map<String, String> finishReasons = new HashMap<>();
    private final Map<String, Integer> priorRequestFinishedCalls = new HashMap<>();
    private long arrivalClock;

    /**
     * @param asyncDepth steps in flight with the AsyncScheduler ({@code max_concurrent_batches}: 2, more under pipeline
     *                   parallelism); the sync Scheduler at pipeline-parallel size 1 keeps one
     */
    protected EngineRig(FixSet fixes, Configuration config, int numGpuBlocks, int asyncDepth) {
        wiring = EngineProcess.builder(fixes, config).kvCache(numGpuBlocks).batchQueueSize(config.batchQueueSize(asyncDepth));
        busyLoop = new EventLoop(wiring.stepLog());
    }

    /** The process's steps so far, for the subclass's constructor: its connector is built over their KV cache and log. */
    protected final EngineProcess.Builder wiring() {
        return wiring;
    }

    /**
     * Builds the engine process around the subclass's connector and its worker side; called once, from the subclass's
     * constructor. {@code worker} may read the scheduler (an aggregator looks requests up in it).
     */
    protected final void wire(KvConnectorBaseV1 connector, Function<Scheduler, KvConnectorWorker> worker) {
        if (process != null) {
            throw new IllegalStateException("the rig is wired already");
        }
        process = wiring.build(connector, worker);
    }

    /** Completes every KV transfer the environment will deliver now (the arbiter's settling calls it each iteration). */
    protected abstract void finishInFlightTransfers();

    /** No KV transfer is in flight or unreported. */
    protected abstract boolean transfersIdle();

    /** How many times the scheduler called the connector's {@code request_finished} for {@code requestId}. */
    public abstract int requestFinishedCalls(String requestId);

    /** {@link #requestFinishedCalls} for the story's request under {@code requestId}: a prior request's calls not counted. */
    public final int storyRequestFinishedCalls(String requestId) {
        return requestFinishedCalls(requestId) - priorRequestFinishedCalls.getOrDefault(requestId, 0);
    }

    /**
     * Set-up of a family's id-reuse point: a one-token request under {@code requestId} is added and the engine run to
     * quiescence, so it is served, freed and reported; then its finish reason and request_finished calls are set aside,
     * so the story's ending facts count only the story's own request. Called before the story sends anything.
     *
     * @throws IllegalStateException when the prior request does not end cleanly (a detector fired, something held), a
     *     set-up the story cannot build on
     */
    public void servePrior(String requestId) {
        if (arrivalClock != 0) {
            throw new IllegalStateException("the prior request under " + requestId + " must be the rig's first");
        }
        sendAdd(requestId, 0, 1);
        runToQuiescence();
        if (!violations().all().isEmpty() || !allFreed() || finishReasons(requestId) == null) {
            throw new IllegalStateException("set-up: the prior request under " + requestId + " did not end cleanly: "
                    + violations().all() + ", " + scheduler().requestsSnapshot());
        }
        priorRequestFinishedCalls.put(requestId, requestFinishedCalls(requestId));
        finishReasons.remove(requestId);
    }

    /** The connector's part of {@link #progressSignature()}. */
    protected abstract String transfersSignature();

    /**
     * The engine id the frontend gives the client's {@code nth} ADD under {@code clientId} in this deployment
     * ({@code InputProcessor.assign_request_id}: the id itself, or with #27987 and randomization on, a suffix per ADD).
     */
    public String engineId(String clientId, int nth) {
        return vllmrace.model.frontend.InputProcessor.assignRequestId(wiring.fixes(), wiring.config(), clientId, nth);
    }

    /** Set-up: the client's ADD goes on the input socket (applied at the next {@code _process_input_queue}). */
    public void sendAdd(String requestId, int numPromptTokens, int maxTokens) {
        sendAdd(requestId, numPromptTokens, maxTokens, 0);
    }

    /** As {@link #sendAdd(String, int, int)}, the request's {@code stopTokenAt}-th output token a stop token (0: none). */
    public void sendAdd(String requestId, int numPromptTokens, int maxTokens, int stopTokenAt) {
        long arrival = ++arrivalClock;
        arrivalTimes.put(requestId, arrival);
        process.inputSocket().send(new EngineCoreMessage.Add(new EngineCoreRequest(requestId, arrival, numPromptTokens, maxTokens, stopTokenAt)));
    }

    /** The client's ABORT goes on the input socket (the next busy-loop iteration's {@code _process_input_queue} applies it). */
    public void sendAbort(String requestId) {
        Long arrival = arrivalTimes.get(requestId);
        process.inputSocket().send(new EngineCoreMessage.Abort(List.of(requestId), arrival == null ? Map.of() : Map.of(requestId, arrival)));
    }

    /** The client's ABORT(id) goes on the input socket and the input thread queues it (call under {@link #atomically}). */
    public void abortArrives(String requestId) {
        sendAbort(requestId);
        engineCore().processInputSockets();
    }

    /** Set-up: keeps the engine's Request object of {@code requestId}, to read its final status after it is freed. */
    public Request track(String requestId) {
        Request request = Objects.requireNonNull(scheduler().getRequest(requestId), () -> requestId + " is not in the scheduler");
        tracked.put(requestId, request);
        return request;
    }

    /** Set-up: the ADDs sent so far are applied ({@code _process_input_queue}) and {@code requestIds} tracked. */
    public void admit(String... requestIds) {
        engineCore().processInputQueue();
        trackAll(requestIds);
    }

    /** Set-up: keeps the Request objects of {@code requestIds} ({@link #track}). */
    public void trackAll(String... requestIds) {
        for (String id : requestIds) {
            track(id);
        }
    }

    /** Set-up: one busy-loop iteration, run directly. */
    public void runBusyLoopOnce() {
        engineCore().runBusyLoopOnce();
        collectOutputs();
    }

    /** Whether EngineCore keeps one batch in flight ({@code EngineCore.step}: the sync Scheduler at pipeline-parallel size 1). */
    public boolean oneBatchInFlight() {
        return process.batchQueueSize() == 1;
    }

    /**
     * Set-up: inputs applied and the next step dispatched, in flight. With the AsyncScheduler one busy-loop iteration
     * (the loop blocks on the oldest step only once the queue is full); with the sync Scheduler (one batch in flight)
     * {@code EngineCore.step} up to {@code execute_model}: the model runs while the client's messages arrive, and the
     * rest of that step is the busy-loop actor's first.
     */
    public void dispatchStep() {
        if (!oneBatchInFlight()) {
            runBusyLoopOnce();
            return;
        }
        engineCore().processInputQueue();
        engineCore().scheduleBatch();
    }

    /**
     * Arbiter: the environment delivers every transfer it will, and the busy loop runs until
     * {@link Settle#SETTLED_ITERATIONS} iterations in a row change nothing; then the detectors at quiescence (SC1's
     * converse, SC5, leaks) and bounded liveness (LV1 stuck, LV2 leaked).
     */
    public void runToQuiescence() {
        runToQuiescence(() -> { });
    }

    /**
     * As {@link #runToQuiescence()}, with {@code environment} (a background thread that keeps up, such as a store thread
     * finishing its jobs) run at each iteration after the transfers are delivered.
     */
    public void runToQuiescence(Runnable environment) {
        int settled = Settle.run(() -> {
            finishInFlightTransfers();
            environment.run();
            engineCore().runBusyLoopOnce();
            collectOutputs();
        }, this::progressSignature, () -> engineCore().isIdle() && !scheduler().hasRequests() && transfersIdle(),
                () -> violations().engineDead());
        if (settled == 0) {
            return; // EngineCore died at an assert and the model's drain past it never settles: no liveness to judge
        }
        scheduler().checkQuiescence();
        scheduler().checkLiveness(settled);
    }

    /** What another iteration could change: the scheduler's state, the transfers, and EngineCore's queues. */
    public String progressSignature() {
        return scheduler().progressSignature() + " | " + transfersSignature() + " | engine idle " + engineCore().isIdle();
    }

    /** Takes what EngineCore sent to the output socket since the last call, remembering the finish reasons. */
    public List<EngineCoreOutput> collectOutputs() {
        List<EngineCoreOutput> all = new ArrayList<>();
        for (List<EngineCoreOutput> outputs : process.outputSocket().drain()) {
            for (EngineCoreOutput output : outputs) {
                all.add(output);
                if (output.finished()) {
                    finishReasons.merge(output.requestId(), output.finishReason(), (a, b) -> a + "," + b);
                }
            }
        }
        return all;
    }

    /** The event loop the actors' coroutines run on (the busy loop's serialisation), for scenario-built actors. */
    public EventLoop busyLoopEvents() {
        return busyLoop;
    }

    /** Actor: one atomic event off the busy loop (a connector's background thread, the worker). */
    public Coroutine<Void> event(String task, String step, Runnable body) {
        return Coroutine.builder(busyLoop, task).step(step, body).build();
    }

    /**
     * Runs {@code body} as one atomic step on the busy loop's serialisation (a one-step coroutine), for harnesses that
     * drive the engine operation by operation; returns what the body raised, or null.
     */
    public RuntimeException atomically(String task, String step, Runnable body) {
        return event(task, step, body).run().failure();
    }

    /** The arrival time the client gave {@code requestId}, or null if it never sent an ADD for it. */
    public Long arrivalTime(String requestId) {
        return arrivalTimes.get(requestId);
    }

    /** The tracked Request object of {@code requestId} (its status survives its free). */
    public Request request(String requestId) {
        return Objects.requireNonNull(tracked.get(requestId), () -> requestId + " is not tracked");
    }

    /** The finish reasons EngineCore sent for {@code requestId}, comma-joined, or null. */
    public String finishReasons(String requestId) {
        return finishReasons.get(requestId);
    }

    public boolean has(ViolationKind kind) {
        return violations().has(kind);
    }

    /** True when the scheduler holds nothing and every block is back in the pool. */
    public boolean allFreed() {
        return scheduler().requestsSnapshot().isEmpty() && blockPool().numUsedBlocks() == 0;
    }

    /** The engine process: its sockets, EngineCore, the scheduler and the KV cache (once wired). */
    @Override
    public EngineProcess process() {
        return Objects.requireNonNull(process, "the rig is not wired yet");
    }

}
