package vllmrace.model;

import java.util.List;
import java.util.Objects;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.Fifo;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.frontend.AsyncLlm;
import vllmrace.model.frontend.EngineCoreClient;
import vllmrace.model.frontend.OutputProcessor;
import vllmrace.model.frontend.RequestState;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.KvLoadFailurePolicy;
import vllmrace.model.sched.Scheduler;

/**
 * One connected model of a vLLM server: the {@link AsyncLlm} frontend on its event loop, the FIFO socket
 * pair, and {@link EngineCore} with its {@link Scheduler}, all sharing one {@link ViolationLog} and one
 * {@link StepLog}. Races are reproduced on this whole path, not on a component in isolation.
 */
public final class VllmInstance implements Observable {
    /** Tokens per KV block when the instance has KV-cache accounting. */
    public static final int BLOCK_SIZE = 4;
    private final FixSet fixes;
    private final ViolationLog violations = new ViolationLog();
    private final StepLog stepLog = new StepLog();
    private final Fifo<EngineCoreMessage> inputSocket = new Fifo<>();
    private final Fifo<List<EngineCoreOutput>> outputSocket = new Fifo<>();
    private final OutputProcessor outputProcessor = new OutputProcessor();
    private final AsyncLlm asyncLlm;
    private final Scheduler scheduler;
    private final EngineCore engineCore;

    private final TestAsyncConnector connector;

    public VllmInstance(FixSet fixes) {
        this(fixes, Configuration.DEFAULT);
    }

    /** As {@link #VllmInstance(FixSet)}, deployed with {@code configuration}. */
    public VllmInstance(FixSet fixes, Configuration configuration) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.asyncLlm = new AsyncLlm(fixes, configuration, new EventLoop(stepLog), outputProcessor, new EngineCoreClient(inputSocket, outputSocket));
        this.scheduler = new Scheduler(fixes, violations, null, null, KvLoadFailurePolicy.FAIL, configuration.schedulerKind(), 1);
        this.engineCore = new EngineCore(scheduler, inputSocket, outputSocket, violations, stepLog);
        this.connector = null;
    }

    /**
     * The same connected model with KV-cache accounting and a KV connector (both roles) in EngineCore: a
     * {@link BlockPool} of {@code numGpuBlocks} blocks of {@link #BLOCK_SIZE} tokens, and a {@link TestAsyncConnector}
     * whose {@code request_finished} follows {@code savePolicy} (e.g. {@link TestAsyncConnector.SavePolicy#ALWAYS}:
     * blocks are delay-freed until the save's {@code finished_sending}). EngineCore steps one batch at a time
     * ({@code batch_queue_size} 1) under either scheduler class (the configuration's: the AsyncScheduler reserves
     * placeholders, the sync Scheduler none), and its worker reports the connector's finished transfers.
     *
     * @throws IllegalArgumentException for {@code numGpuBlocks < 1}
     */
    public VllmInstance(FixSet fixes, TestAsyncConnector.SavePolicy savePolicy, int numGpuBlocks) {
        this(fixes, Configuration.DEFAULT, savePolicy, numGpuBlocks);
    }

    /** As {@link #VllmInstance(FixSet, TestAsyncConnector.SavePolicy, int)}, deployed with {@code configuration}. */
    public VllmInstance(FixSet fixes, Configuration configuration, TestAsyncConnector.SavePolicy savePolicy, int numGpuBlocks) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        Objects.requireNonNull(savePolicy, "savePolicy");
        if (numGpuBlocks < 1) {
            throw new IllegalArgumentException("numGpuBlocks must be >= 1, got " + numGpuBlocks);
        }
        this.asyncLlm = new AsyncLlm(fixes, configuration, new EventLoop(stepLog), outputProcessor, new EngineCoreClient(inputSocket, outputSocket));
        KvCacheManager kvCacheManager = new KvCacheManager(new BlockPool(numGpuBlocks, violations), BLOCK_SIZE, violations);
        this.connector = new TestAsyncConnector(kvCacheManager, savePolicy);
        this.scheduler = new Scheduler(fixes, violations, kvCacheManager, connector, KvLoadFailurePolicy.FAIL,
                configuration.schedulerKind(), 1);
        this.engineCore = new EngineCore(scheduler, inputSocket, outputSocket, violations, stepLog, connector, 1);
    }

    /** The KV connector of {@link #VllmInstance(FixSet, TestAsyncConnector.SavePolicy, int)}, or null. */
    public TestAsyncConnector connector() {
        return connector;
    }

    /**
     * Every detector at quiescence (nothing in flight on either socket). FE3 both ways: every request the frontend
     * still waits on is running in EngineCore as that same request (else its caller never gets a final output), and
     * every unfinished engine request has its frontend state (else its response goes to nobody). FE4 both ways:
     * {@code parent_requests} is empty when {@code request_states} is, and every child state's parent is held. Then the
     * scheduler's own (SC1's converse, SC5), with or without a KV connector, and LV2 where the busy loop blocks with
     * requests left ({@link Scheduler#checkBlockedLoop}).
     */
    public void checkQuiescence() {
        if (!inputSocket.isEmpty() || !outputSocket.isEmpty()) {
            throw new IllegalStateException("not quiescent: messages are still in flight");
        }
        for (RequestState state : outputProcessor.requestStatesSnapshot()) {
            Request held = scheduler.getRequest(state.requestId());
            if (held == null || held.arrivalTime() != state.arrivalTime() || held.isFinished()) {
                violations.record(ViolationKind.ORPHANED_FRONTEND_REQUEST, state.requestId(),
                        "frontend waits on " + state.requestId() + "@" + state.arrivalTime()
                                + " but EngineCore holds " + (held == null ? "nothing" : held) + " under that id");
            }
        }
        for (Request request : scheduler.requestsSnapshot()) {
            RequestState state = outputProcessor.getRequestState(request.requestId());
            if (!request.isFinished() && (state == null || state.arrivalTime() != request.arrivalTime())) {
                violations.record(ViolationKind.ENGINE_REQUEST_WITHOUT_FRONTEND, request.requestId(),
                        "EngineCore runs " + request + " but the frontend " + (state == null ? "has no state for it"
                                : "waits on " + state.requestId() + "@" + state.arrivalTime() + " instead") + ": its response goes to nobody");
            }
        }
        for (String parent : outputProcessor.leakedParentRequests()) {
            violations.record(ViolationKind.LEAKED_PARENT_REQUEST, parent,
                    "parent_requests still holds " + parent + " although request_states is empty");
        }
        for (RequestState state : outputProcessor.requestStatesSnapshot()) {
            if (state.parentReq() != null && !outputProcessor.parentRequestsSnapshot().containsKey(state.parentReq().requestId())) {
                violations.record(ViolationKind.CHILD_WITHOUT_PARENT_REQUEST, state.requestId(),
                        "child " + state.requestId() + " names parent " + state.parentReq().requestId() + ", which parent_requests no longer holds");
            }
        }
        scheduler.checkQuiescence();
        scheduler.checkBlockedLoop(engineCore.isIdle());
    }

    public AsyncLlm asyncLlm() {
        return asyncLlm;
    }

    public OutputProcessor outputProcessor() {
        return outputProcessor;
    }

    public EngineCore engineCore() {
        return engineCore;
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    public Fifo<EngineCoreMessage> inputSocket() {
        return inputSocket;
    }

    public ViolationLog violations() {
        return violations;
    }

    public StepLog stepLog() {
        return stepLog;
    }
}
