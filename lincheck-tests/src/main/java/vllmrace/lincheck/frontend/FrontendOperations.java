package vllmrace.lincheck.frontend;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.VllmInstance;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.RequestAlreadyRunningException;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.model.frontend.SamplingParams;

/**
 * The frontend's public operations over one connected model (AsyncLLM → FIFO → EngineCore → Scheduler with KV blocks
 * and a connector that async-saves every finished request, as a P/D prefill side or an offloader does), for Lincheck's
 * linearizability check against {@link FrontendSpecification}: add ({@code n} 1, {@code n} 2, with a stop string the
 * engine does not know), the client's abort by its external id, {@code generate()}'s cancellation by internal id, an
 * EngineCore busy-loop iteration, the saves finishing, and an output-handler pass. Ids come from a two-id pool so
 * scenarios re-use ids, which is where the races live. {@link #noDetectorFired()} is the invariant checked after every
 * scenario part: no detector fired (FE1, FE2, the scheduler's) and FE4 holds.
 *
 * <p>Lincheck builds instances with the no-arg constructor; {@link #configure} selects the fixes and yield conditions.
 */
@Param(name = "id", gen = IntGen.class, conf = "0:1")
public class FrontendOperations {
    static final int MAX_TOKENS = 2;
    /** A session's chunks, each its token budget. */
    static final int[] SESSION_CHUNKS = {1, 2};
    /** KV blocks: enough that every request of a scenario is scheduled every step, delay-freed ones included. */
    static final int NUM_GPU_BLOCKS = 64;
    private static volatile FixSet fixes = FixSet.all();
    private static volatile Configuration configuration = Configuration.DEFAULT;
    private static volatile TestAsyncConnector.SavePolicy savePolicy = TestAsyncConnector.SavePolicy.ALWAYS;

    private final VllmInstance vllm;
    /** Per id, the collector of the last accepted add: what {@code generate()}'s cancellation of that request aborts. */
    private final RequestOutputCollector[] lastAdded = new RequestOutputCollector[2];
    /** Every accepted add's collector, in order: FE5 is checked on each. */
    private final java.util.List<RequestOutputCollector> collectors = new java.util.concurrent.CopyOnWriteArrayList<>();

    public FrontendOperations() {
        RunRecorder.countInvocation();
        vllm = new VllmInstance(fixes, configuration, savePolicy, NUM_GPU_BLOCKS);
    }

    /**
     * The fixes, the configuration whose yield conditions decide which frontend awaits suspend, and whether the
     * connector async-saves every finished request ({@code ALWAYS}: a finished or aborted request stays in the scheduler
     * until its save finishes) or never delays a free ({@code NEVER}).
     */
    public static void configure(FixSet fixes, Configuration configuration, TestAsyncConnector.SavePolicy savePolicy) {
        FrontendOperations.fixes = fixes;
        FrontendOperations.configuration = configuration;
        FrontendOperations.savePolicy = savePolicy;
    }

    static FixSet fixes() {
        return fixes;
    }

    static String requestId(int id) {
        return "r" + id;
    }

    private String add(int id, SamplingParams params) {
        return accepted(id, vllm.asyncLlm().addRequest(requestId(id), params).run());
    }

    private String accepted(int id, vllmrace.model.asyncio.Coroutine<RequestOutputCollector> add) {
        RuntimeException failure = add.failure();
        if (failure instanceof RequestAlreadyRunningException) {
            return "REJECTED";
        }
        if (failure != null) {
            throw failure;
        }
        lastAdded[id] = add.join();
        collectors.add(lastAdded[id]);
        return "ACCEPTED";
    }

    /** {@code AsyncLLM.add_request}, {@code n} 1: ACCEPTED, or REJECTED when the frontend still runs the id. */
    @Operation
    public String addRequest(@Param(name = "id") int id) {
        return add(id, SamplingParams.maxTokens(MAX_TOKENS));
    }

    /** {@code AsyncLLM.add_request}, {@code n} 2: a parent request and its two children. */
    @Operation
    public String addParallel(@Param(name = "id") int id) {
        return add(id, SamplingParams.maxTokens(MAX_TOKENS).withN(2));
    }

    /** {@code AsyncLLM.add_request} with a stop string that appears in the first token (EngineCore does not know it). */
    @Operation
    public String addStop(@Param(name = "id") int id) {
        return add(id, new SamplingParams(1, MAX_TOKENS, 1));
    }

    /** {@code AsyncLLM.add_request} with streaming input: a session of two chunks (1 and 2 tokens), both sent at once. */
    @Operation
    public String addSession(@Param(name = "id") int id) {
        return accepted(id, vllm.asyncLlm().addStreamingRequest(requestId(id), SESSION_CHUNKS).run());
    }

    /** {@code generate()}'s loop takes what waits in the id's last accepted add's collector. */
    @Operation
    public void take(@Param(name = "id") int id) {
        RequestOutputCollector added = lastAdded[id];
        if (added != null) {
            added.getNowait();
        }
    }

    /** {@code AsyncLLM.abort} by the client's (external) id. */
    @Operation
    public void abort(@Param(name = "id") int id) {
        vllm.asyncLlm().abort(requestId(id)).run().join();
    }

    /** {@code generate()}'s cancellation: {@code abort(q.request_id, internal=True)} of the id's last accepted add. */
    @Operation
    public void cancel(@Param(name = "id") int id) {
        RequestOutputCollector added = lastAdded[id];
        if (added != null) {
            vllm.asyncLlm().abort(added.requestId(), true).run().join();
        }
    }

    /** One EngineCore busy-loop iteration: drain the input socket, then a model step. One busy loop upstream. */
    @Operation(nonParallelGroup = "busyLoop")
    public void engineStep() {
        vllm.engineCore().runBusyLoopOnce();
    }

    /** The connector's in-flight saves finish (their finished_sending reaches the next busy-loop iteration). */
    @Operation(nonParallelGroup = "busyLoop")
    public void transfersComplete() {
        vllm.connector().finishInFlightTransfers();
    }

    /** One pass of the frontend's output handler. Upstream runs exactly one output_handler task. */
    @Operation(nonParallelGroup = "outputHandler")
    public void outputStep() {
        vllm.asyncLlm().outputHandler().run().join();
    }

    @Validate
    public void noDetectorFired() {
        vllm.checkFrontendInvariants();
        collectors.forEach(vllm::checkCollector);
        if (!vllm.violations().isEmpty()) {
            throw new IllegalStateException("invariant broken: " + vllm.violations());
        }
    }
}
