package vllmrace.races.scheduler;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.engine.Fifo;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.KvLoadFailurePolicy;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.Scheduler;
import vllmrace.model.detect.Settle;

/**
 * One EngineCore process of the scheduler races, wired as upstream runs it with async scheduling: the input
 * socket and input thread, the busy loop with a batch queue of 2 ({@code step_with_batch_queue}), the
 * {@link Scheduler} over a {@link KvCacheManager} / {@link BlockPool}, and a {@link TestAsyncConnector} whose
 * transfers complete when the scenario says so; one {@link ViolationLog} and one {@link StepLog}.
 *
 * <p>The scenario's actors are {@link Coroutine}s on one {@link EventLoop}: here it stands for the busy loop's
 * serialisation. Everything the scheduler does runs on the busy-loop thread, so its steps never overlap; the
 * input thread only enqueues, so its one step (an ABORT arriving) is atomic too. The interleavings JCStress and
 * Lincheck explore are therefore exactly where an ABORT can land between two busy-loop calls.
 */
public final class EngineCoreRig {
    /** Tokens per KV block. */
    public static final int BLOCK_SIZE = 4;
    /** Async scheduling: schedule(N+1) runs before update_from_output(N). */
    public static final int BATCH_QUEUE_SIZE = 2;

    private final ViolationLog violations = new ViolationLog();
    private final StepLog stepLog = new StepLog();
    private final EventLoop busyLoop = new EventLoop(stepLog);
    private final Fifo<EngineCoreMessage> inputSocket = new Fifo<>();
    private final Fifo<List<EngineCoreOutput>> outputSocket = new Fifo<>();
    private final BlockPool blockPool;
    private final KvCacheManager kvCacheManager;
    private final TestAsyncConnector connector;
    private final Scheduler scheduler;
    private final EngineCore engineCore;
    private final int batchQueueSize;
    private final Map<String, Long> arrivalTimes = new HashMap<>();
    private final Map<String, Request> tracked = new HashMap<>();
    private final Map<String, String> finishReasons = new HashMap<>();
    private long arrivalClock;

    public EngineCoreRig(FixSet fixes, TestAsyncConnector.SavePolicy savePolicy, int numGpuBlocks) {
        this(fixes, Configuration.DEFAULT, savePolicy, numGpuBlocks, BATCH_QUEUE_SIZE);
    }

    /** As {@link #EngineCoreRig(FixSet, TestAsyncConnector.SavePolicy, int)} under a deployment's configuration. */
    public EngineCoreRig(FixSet fixes, Configuration config, TestAsyncConnector.SavePolicy savePolicy, int numGpuBlocks) {
        this(fixes, config, savePolicy, numGpuBlocks, BATCH_QUEUE_SIZE);
    }

    /**
     * As {@link #EngineCoreRig(FixSet, Configuration, TestAsyncConnector.SavePolicy, int)} with a deeper batch queue: {@code batch_queue_size}
     * is {@code max_concurrent_batches}, more than 2 with pipeline parallelism, so schedule(N+2) also runs before
     * update_from_output(N).
     */
    public EngineCoreRig(FixSet fixes, Configuration config, TestAsyncConnector.SavePolicy savePolicy, int numGpuBlocks,
                         int batchQueueSize) {
        blockPool = new BlockPool(numGpuBlocks, violations);
        kvCacheManager = new KvCacheManager(blockPool, BLOCK_SIZE, violations);
        connector = new TestAsyncConnector(kvCacheManager, savePolicy, fixes);
        // the sync Scheduler at pipeline-parallel size 1 keeps one batch in flight (EngineCore.step)
        int batches = config.batchQueueSize(batchQueueSize);
        this.batchQueueSize = batches;
        scheduler = new Scheduler(fixes, violations, kvCacheManager, connector, KvLoadFailurePolicy.FAIL, config.schedulerKind(), batches);
        engineCore = new EngineCore(scheduler, inputSocket, outputSocket, violations, stepLog, connector, batches);
    }

    /** Set-up: the client's ADD goes on the input socket (applied at the next {@code _process_input_queue}). */
    public void sendAdd(String requestId, int numPromptTokens, int maxTokens) {
        sendAdd(requestId, numPromptTokens, maxTokens, 0);
    }

    /** As {@link #sendAdd(String, int, int)}, the request's {@code stopTokenAt}-th output token a stop token (0: none). */
    public void sendAdd(String requestId, int numPromptTokens, int maxTokens, int stopTokenAt) {
        long arrival = ++arrivalClock;
        arrivalTimes.put(requestId, arrival);
        inputSocket.send(new EngineCoreMessage.Add(new EngineCoreRequest(requestId, arrival, numPromptTokens, maxTokens, stopTokenAt)));
    }

    /** Set-up: keeps the engine's Request object of {@code requestId}, to read its final status after it is freed. */
    public Request track(String requestId) {
        Request request = Objects.requireNonNull(scheduler.getRequest(requestId), () -> requestId + " is not in the scheduler");
        tracked.put(requestId, request);
        return request;
    }

    /**
     * Set-up: inputs applied and the next step dispatched, in flight. With the AsyncScheduler one busy-loop iteration
     * (the loop blocks on the oldest step only once the queue is full); with the sync Scheduler (one batch in flight)
     * {@code EngineCore.step} up to {@code execute_model}: the model runs while the client's messages arrive, and
     * {@link BusyLoop#finishStepInFlight()} is the rest of that step.
     */
    public void dispatchStep() {
        if (batchQueueSize > 1) {
            runBusyLoopOnce();
            return;
        }
        engineCore.processInputQueue();
        engineCore.scheduleBatch();
    }

    /** Whether EngineCore keeps one batch in flight ({@code EngineCore.step}: the sync Scheduler at pipeline-parallel size 1). */
    public boolean oneBatchInFlight() {
        return batchQueueSize == 1;
    }

    /** Set-up: one busy-loop iteration, run directly. */
    public void runBusyLoopOnce() {
        engineCore.runBusyLoopOnce();
        collectOutputs();
    }

    /**
     * Actor: the client's ABORT(id) reaches EngineCore. One step of the input thread
     * ({@code process_input_sockets}): into {@code input_queue}, and with #29987 into {@code aborts_queue}.
     */
    public Coroutine<Void> clientAbort(String requestId) {
        return Coroutine.builder(busyLoop, "client ABORT(" + requestId + ")")
                .step("EngineCoreProc.process_input_sockets: ABORT(" + requestId + ") -> input_queue, aborts_queue",
                        () -> abortArrives(requestId))
                .build();
    }

    /** The event loop the actors' coroutines run on (the busy loop's serialisation), for scenario-built actors. */
    public EventLoop busyLoopEvents() {
        return busyLoop;
    }

    /** Actor: a worker event, one atomic step: every in-flight KV transfer completes (as {@code get_finished} will report). */
    public Coroutine<Void> worker(String what) {
        return event("worker", what, connector::finishInFlightTransfers);
    }

    /** Actor: one atomic event off the busy loop (a connector's background thread, the worker). */
    public Coroutine<Void> event(String task, String step, Runnable body) {
        return Coroutine.builder(busyLoop, task).step(step, body).build();
    }

    /** The client's ABORT(id) goes on the input socket and the input thread queues it (call under {@link #atomically}). */
    public void abortArrives(String requestId) {
        Long arrival = arrivalTimes.get(requestId);
        inputSocket.send(new EngineCoreMessage.Abort(List.of(requestId), arrival == null ? Map.of() : Map.of(requestId, arrival)));
        engineCore.processInputSockets();
    }

    /** The busy loop as an actor: add iterations and worker events in program order, then build. */
    public BusyLoop busyLoop() {
        return new BusyLoop(Coroutine.builder(busyLoop, "EngineCore busy loop"));
    }

    /** Builds the busy-loop actor's steps. */
    public final class BusyLoop {
        private final Coroutine.Builder builder;

        private BusyLoop(Coroutine.Builder builder) {
            this.builder = builder;
        }

        /**
         * One iteration of {@code run_busy_loop}: {@code _process_input_queue}; {@code step_with_batch_queue}'s
         * {@code schedule()} of step N+1; then, if the loop blocks on the oldest step N, its result,
         * {@code _process_aborts_queue} and {@code update_from_output(N)} (nothing when it does not block).
         */
        public BusyLoop iteration() {
            boolean[] blocks = new boolean[1];
            builder.step("EngineCoreProc._process_input_queue", engineCore::processInputQueue)
                    .step("step_with_batch_queue: Scheduler.schedule + execute_model", () -> blocks[0] = engineCore.scheduleBatch())
                    .step("step_with_batch_queue: future.result, _process_aborts_queue, Scheduler.update_from_output", () -> {
                        if (blocks[0]) {
                            engineCore.processOldestBatch();
                            collectOutputs();
                        }
                    });
            return this;
        }

        /** The remaining part of an iteration whose first steps ran in the set-up. */
        public BusyLoop processOldestBatch() {
            builder.step("step_with_batch_queue: future.result, _process_aborts_queue, Scheduler.update_from_output", () -> {
                engineCore.processOldestBatch();
                collectOutputs();
            });
            return this;
        }

        /**
         * With one batch in flight, the rest of {@code EngineCore.step} after {@link #dispatchStep()}: the result,
         * {@code _process_aborts_queue} and {@code update_from_output}; nothing with the AsyncScheduler, whose next
         * {@link #iteration()} processes the oldest step once it blocks on it.
         */
        public BusyLoop finishStepInFlight() {
            return oneBatchInFlight() ? processOldestBatch() : this;
        }

        /** A worker event: every in-flight async load/save completes (reported by the next {@code get_finished}). */
        public BusyLoop workerTransfersComplete() {
            builder.step("Worker: in-flight KV transfers complete", connector::finishInFlightTransfers);
            return this;
        }

        public Coroutine<Void> build() {
            return builder.build();
        }
    }

    /**
     * Arbiter: the environment delivers every transfer it will (each iteration completes the in-flight ones, except a
     * load whose remote side never pushes), and the busy loop runs until {@link Settle#SETTLED_ITERATIONS} iterations in
     * a row change nothing; then the detectors at quiescence (SC1's converse, SC5, leaks) and bounded liveness (LV1
     * stuck, LV2 leaked).
     */
    public void runToQuiescence() {
        int settled = Settle.run(() -> {
            connector.finishInFlightTransfers();
            engineCore.runBusyLoopOnce();
            collectOutputs();
        }, this::progressSignature, () -> engineCore.isIdle() && !scheduler.hasRequests() && connector.isIdle());
        scheduler.checkQuiescence();
        scheduler.checkLiveness(settled);
    }

    /** What another iteration could change: the scheduler's state, the transfers, and EngineCore's queues. */
    public String progressSignature() {
        return scheduler.progressSignature() + " | " + connector.progressSignature() + " | engine idle " + engineCore.isIdle();
    }

    /** Takes what EngineCore sent to the output socket since the last call, remembering the finish reasons. */
    public List<EngineCoreOutput> collectOutputs() {
        List<EngineCoreOutput> all = new ArrayList<>();
        for (List<EngineCoreOutput> outputs : outputSocket.drain()) {
            for (EngineCoreOutput output : outputs) {
                all.add(output);
                if (output.finished()) {
                    finishReasons.merge(output.requestId(), output.finishReason(), (a, b) -> a + "," + b);
                }
            }
        }
        return all;
    }

    /**
     * Runs {@code body} as one atomic step on the busy loop's serialisation (a one-step coroutine), for harnesses
     * that drive the engine operation by operation; returns what the body raised, or null.
     */
    public RuntimeException atomically(String task, String step, Runnable body) {
        return Coroutine.builder(busyLoop, task).step(step, body).build().run().failure();
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
        return violations.has(kind);
    }

    /** True when the scheduler holds nothing and every block is back in the pool. */
    public boolean allFreed() {
        return scheduler.requestsSnapshot().isEmpty() && blockPool.numUsedBlocks() == 0;
    }

    public ViolationLog violations() {
        return violations;
    }

    public StepLog stepLog() {
        return stepLog;
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    public EngineCore engineCore() {
        return engineCore;
    }

    public TestAsyncConnector connector() {
        return connector;
    }

    public KvCacheManager kvCacheManager() {
        return kvCacheManager;
    }

    public BlockPool blockPool() {
        return blockPool;
    }
}
