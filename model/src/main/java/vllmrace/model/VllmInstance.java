package vllmrace.model;

import java.util.Objects;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.Fifo;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.frontend.AsyncLlm;
import vllmrace.model.frontend.EngineCoreClient;
import vllmrace.model.frontend.OutputProcessor;
import vllmrace.model.frontend.RequestState;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.Scheduler;

/**
 * One connected model of a vLLM server: the {@link AsyncLlm} frontend on its event loop over the socket pair of one
 * {@link EngineProcess} (EngineCore with its {@link Scheduler}), all sharing one {@link ViolationLog} and one
 * {@link StepLog}. Races are reproduced on this whole path, not on a component in isolation.
 */
public final class VllmInstance implements Wired {
    /** Tokens per KV block when the instance has KV-cache accounting ({@link EngineProcess#BLOCK_SIZE}). */
    public static final int BLOCK_SIZE = EngineProcess.BLOCK_SIZE;
    private final EngineProcess engine;
    private final OutputProcessor outputProcessor;
    private final AsyncLlm asyncLlm;
    private final TestAsyncConnector connector;

    public VllmInstance(FixSet fixes) {
        this(fixes, Configuration.DEFAULT);
    }

    /** As {@link #VllmInstance(FixSet)}, deployed with {@code configuration}. */
    public VllmInstance(FixSet fixes, Configuration configuration) {
        this(EngineProcess.builder(fixes, configuration).build());
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
        this(withTestConnector(EngineProcess.builder(fixes, configuration).kvCache(numGpuBlocks), savePolicy));
    }

    private static EngineProcess withTestConnector(EngineProcess.Builder builder, TestAsyncConnector.SavePolicy savePolicy) {
        TestAsyncConnector connector = new TestAsyncConnector(builder.kvCacheManager(), Objects.requireNonNull(savePolicy, "savePolicy"));
        return builder.build(connector, scheduler -> connector); // the test connector is its own worker side
    }

    private VllmInstance(EngineProcess engine) {
        this.engine = engine;
        this.outputProcessor = new OutputProcessor(engine.fixes());
        this.connector = (TestAsyncConnector) engine.connector();
        this.asyncLlm = new AsyncLlm(engine.fixes(), engine.config(), EventLoop.asyncio(engine.stepLog(), engine.config().yields()), outputProcessor,
                new EngineCoreClient(engine.inputSocket(), engine.outputSocket()));
    }

    /** The KV connector of {@link #VllmInstance(FixSet, TestAsyncConnector.SavePolicy, int)}, or null. */
    public TestAsyncConnector connector() {
        return connector;
    }

    /**
     * Every detector at quiescence (nothing in flight on either socket). FE3 both ways: every request the frontend
     * still waits on is running in EngineCore as that same request (else its caller never gets a final output), and
     * every unfinished engine request has its frontend state (else its response goes to nobody). FE4 both ways
     * ({@link #checkFrontendInvariants}). Then the
     * scheduler's own (SC1's converse, SC5), with or without a KV connector, and LV2 where the busy loop blocks with
     * requests left ({@link Scheduler#checkBlockedLoop}).
     */
    public void checkQuiescence() {
        if (!engine.inputSocket().isEmpty() || !engine.outputSocket().isEmpty()) {
            throw new IllegalStateException("not quiescent: messages are still in flight");
        }
        for (RequestState state : outputProcessor.requestStatesSnapshot()) {
            Request held = scheduler().getRequest(state.requestId());
            if (held == null || held.arrivalTime() != state.arrivalTime() || held.isFinished()) {
                violations().record(ViolationKind.ORPHANED_FRONTEND_REQUEST, state.requestId(),
                        "frontend waits on " + state.requestId() + "@" + state.arrivalTime()
                                + " but EngineCore holds " + (held == null ? "nothing" : held) + " under that id");
            }
        }
        for (Request request : scheduler().requestsSnapshot()) {
            RequestState state = outputProcessor.getRequestState(request.requestId());
            if (!request.isFinished() && (state == null || state.arrivalTime() != request.arrivalTime())) {
                violations().record(ViolationKind.ENGINE_REQUEST_WITHOUT_FRONTEND, request.requestId(),
                        "EngineCore runs " + request + " but the frontend " + (state == null ? "has no state for it"
                                : "waits on " + state.requestId() + "@" + state.arrivalTime() + " instead") + ": its response goes to nobody");
            }
        }
        checkFrontendInvariants();
        scheduler().checkQuiescence();
        scheduler().checkBlockedLoop(engine.engineCore().isIdle());
    }

    /**
     * FE4 both ways, which hold between any two frontend steps (no quiescence needed): every parent in
     * {@code parent_requests} has a child state, and every child state's parent is held.
     */
    public void checkFrontendInvariants() {
        for (String parent : outputProcessor.leakedParentRequests()) {
            violations().record(ViolationKind.LEAKED_PARENT_REQUEST, parent,
                    "parent_requests still holds " + parent + " although request_states holds none of its children");
        }
        for (RequestState state : outputProcessor.requestStatesSnapshot()) {
            if (state.parentReq() != null && !outputProcessor.parentRequestsSnapshot().containsKey(state.parentReq().requestId())) {
                violations().record(ViolationKind.CHILD_WITHOUT_PARENT_REQUEST, state.requestId(),
                        "child " + state.requestId() + " names parent " + state.parentReq().requestId() + ", which parent_requests no longer holds");
            }
        }
    }

    /**
     * FE5 for one caller's collector: a chunk boundary merged away before the caller took it (the caller counts one chunk
     * fewer than were sent, waits for a boundary already delivered, and never sends its final marker).
     */
    public void checkCollector(vllmrace.model.frontend.RequestOutputCollector queue) {
        if (queue.boundariesErased() > 0) {
            violations().record(ViolationKind.CHUNK_BOUNDARY_LOST, queue.requestId(), queue.boundariesErased() + " of "
                    + queue.boundariesPut() + " chunk boundaries put for " + queue.requestId() + " were merged into a later "
                    + "output before generate() took them: the caller saw " + queue.boundariesTaken());
        }
    }

    public AsyncLlm asyncLlm() {
        return asyncLlm;
    }

    public OutputProcessor outputProcessor() {
        return outputProcessor;
    }

    /** The EngineCore process behind the frontend. */
    @Override
    public EngineProcess process() {
        return engine;
    }

    public Fifo<EngineCoreMessage> inputSocket() {
        return engine.inputSocket();
    }
}
