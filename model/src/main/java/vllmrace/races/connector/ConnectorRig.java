package vllmrace.races.connector;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.connector.multi.ChildConnector;
import vllmrace.model.connector.multi.KvOutputAggregator;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.MultiConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
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
 * One decode-side EngineCore of the connector races (reference §3): the busy loop with async scheduling (batch queue 2)
 * over the {@link Scheduler} and a {@link KvCacheManager} / {@link BlockPool}, whose connector is a
 * {@link MultiConnector} of the children the scenario builds, with one worker (world size 1) behind a
 * {@link KvOutputAggregator}. The scenario's actors are {@link Coroutine}s on one {@link EventLoop} standing for the busy
 * loop's serialisation; a worker transfer completing is one atomic step.
 */
public final class ConnectorRig {
    public static final int BLOCK_SIZE = 4;
    public static final int BATCH_QUEUE_SIZE = 2;

    private final FixSet fixes;
    private final ViolationLog violations = new ViolationLog();
    private final StepLog stepLog = new StepLog();
    private final EventLoop busyLoop = new EventLoop(stepLog);
    private final Fifo<EngineCoreMessage> inputSocket = new Fifo<>();
    private final Fifo<List<EngineCoreOutput>> outputSocket = new Fifo<>();
    private final BlockPool blockPool;
    private final KvCacheManager kvCacheManager;
    private final List<ChildConnector> children;
    private final MultiConnector multiConnector;
    private final Scheduler scheduler;
    private final KvOutputAggregator aggregator;
    private final EngineCore engineCore;
    private final Map<String, Request> tracked = new HashMap<>();
    private long arrivalClock;

    /** @param children builds the MultiConnector's children, in config order, over the rig's KV-cache manager */
    public ConnectorRig(FixSet fixes, int numGpuBlocks, Function<KvCacheManager, List<ChildConnector>> children) {
        this(fixes, Configuration.DEFAULT, numGpuBlocks, children);
    }

    /** As {@link #ConnectorRig(FixSet, int, Function)} under a deployment's configuration (its scheduler class). */
    public ConnectorRig(FixSet fixes, Configuration config, int numGpuBlocks, Function<KvCacheManager, List<ChildConnector>> children) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        blockPool = new BlockPool(numGpuBlocks, violations);
        kvCacheManager = new KvCacheManager(blockPool, BLOCK_SIZE, violations);
        this.children = List.copyOf(children.apply(kvCacheManager));
        multiConnector = new MultiConnector(fixes, this.children);
        int batches = config.batchQueueSize(BATCH_QUEUE_SIZE);
        scheduler = new Scheduler(fixes, violations, kvCacheManager, multiConnector, KvLoadFailurePolicy.FAIL, config.schedulerKind(), batches);
        aggregator = new KvOutputAggregator(List.of(multiConnector), null, violations, scheduler::getRequest);
        engineCore = new EngineCore(scheduler, inputSocket, outputSocket, violations, stepLog, aggregator, batches);
    }

    /** Set-up: the client's ADD goes on the input socket. */
    public void sendAdd(String requestId, int numPromptTokens, int maxTokens) {
        sendAdd(requestId, numPromptTokens, maxTokens, 0);
    }

    /** As {@link #sendAdd(String, int, int)}, the request's {@code stopTokenAt}-th output token a stop token (0: none). */
    public void sendAdd(String requestId, int numPromptTokens, int maxTokens, int stopTokenAt) {
        inputSocket.send(new EngineCoreMessage.Add(new EngineCoreRequest(requestId, ++arrivalClock, numPromptTokens, maxTokens, stopTokenAt)));
    }

    /** The client's ABORT goes on the input socket (the next busy-loop iteration's {@code _process_input_queue} applies it). */
    public void sendAbort(String requestId) {
        Request request = tracked.get(requestId);
        inputSocket.send(new EngineCoreMessage.Abort(List.of(requestId), request == null ? Map.of() : Map.of(requestId, request.arrivalTime())));
    }

    /** Set-up: keeps the engine's Request object of {@code requestId}. */
    public Request track(String requestId) {
        Request request = Objects.requireNonNull(scheduler.getRequest(requestId), () -> requestId + " is not in the scheduler");
        tracked.put(requestId, request);
        return request;
    }

    /** Set-up: one busy-loop iteration, run directly. */
    public void runBusyLoopOnce() {
        engineCore.runBusyLoopOnce();
        outputSocket.drain();
    }

    /** A coroutine of the busy loop's iterations and worker events, in program order. */
    public Actor actor(String task) {
        return new Actor(Coroutine.builder(busyLoop, task));
    }

    /** Builds an actor's steps. */
    public final class Actor {
        private final Coroutine.Builder builder;

        private Actor(Coroutine.Builder builder) {
            this.builder = builder;
        }

        /**
         * One iteration of {@code run_busy_loop} as one atomic step: {@code _process_input_queue}, then
         * {@code step_with_batch_queue} (schedule N+1; if the loop blocks, get_finished and update_from_output of N).
         * The connector races have no input-thread actor, so a finer split allows no other outcome.
         */
        public Actor iteration() {
            builder.step("EngineCore.run_busy_loop: _process_input_queue + step_with_batch_queue", () -> {
                engineCore.runBusyLoopOnce();
                outputSocket.drain();
            });
            return this;
        }

        /** A worker event (one atomic step). */
        public Actor worker(String upstream, Runnable event) {
            builder.step(upstream, event);
            return this;
        }

        public Coroutine<Void> build() {
            return builder.build();
        }
    }

    /**
     * Arbiter: every in-flight transfer completes and the busy loop runs until {@link Settle#SETTLED_ITERATIONS}
     * iterations in a row change nothing; then the detectors at quiescence (SC5, leaks) and bounded liveness (LV1, LV2).
     */
    public void runToQuiescence() {
        int settled = Settle.run(() -> {
            for (ChildConnector c : children) {
                if (c instanceof NixlDecodeConnector n) {
                    n.finishInFlightTransfers();
                } else if (c instanceof LmCacheConnector l) {
                    l.finishInFlightTransfers();
                }
            }
            engineCore.runBusyLoopOnce();
            outputSocket.drain();
        }, () -> scheduler.progressSignature() + " | children idle " + childrenIdle() + " | engine idle " + engineCore.isIdle(),
                () -> engineCore.isIdle() && !scheduler.hasRequests() && childrenIdle());
        scheduler.checkQuiescence();
        scheduler.checkLiveness(settled);
    }

    private boolean childrenIdle() {
        for (ChildConnector c : children) {
            if ((c instanceof NixlDecodeConnector n && !n.isIdle()) || (c instanceof LmCacheConnector l && !l.isIdle())) {
                return false;
            }
        }
        return true;
    }

    /** Runs {@code body} as one atomic step on the busy loop's serialisation; returns what it raised, or null. */
    public RuntimeException atomically(String task, String step, Runnable body) {
        return Coroutine.builder(busyLoop, task).step(step, body).build().run().failure();
    }

    public Request request(String requestId) {
        return Objects.requireNonNull(tracked.get(requestId), () -> requestId + " is not tracked");
    }

    public boolean has(ViolationKind kind) {
        return violations.has(kind);
    }

    /** True when the scheduler holds nothing and every block is back in the pool. */
    public boolean allFreed() {
        return scheduler.requestsSnapshot().isEmpty() && blockPool.numUsedBlocks() == 0;
    }

    public FixSet fixes() {
        return fixes;
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

    public MultiConnector multiConnector() {
        return multiConnector;
    }

    public KvOutputAggregator aggregator() {
        return aggregator;
    }

    public List<ChildConnector> children() {
        return new ArrayList<>(children);
    }

    public BlockPool blockPool() {
        return blockPool;
    }
}
