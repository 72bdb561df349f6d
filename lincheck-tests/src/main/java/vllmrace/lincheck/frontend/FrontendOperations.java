package vllmrace.lincheck.frontend;

import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Validate;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.VllmInstance;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.RequestAlreadyRunningException;

/**
 * The frontend's public operations over one connected model (AsyncLLM → FIFO → EngineCore → Scheduler), for
 * Lincheck's linearizability check against {@link FrontendSpecification}. Ids come from a two-id pool so
 * scenarios re-use ids, which is where the races live. {@link #noDetectorFired()} is the invariant (FE1,
 * FE2: no duplicate live id, no ABORT finishing the wrong request) checked after every scenario part.
 *
 * <p>Lincheck builds instances with the no-arg constructor; {@link #configure} selects the fixes.
 */
@Param(name = "id", gen = IntGen.class, conf = "0:1")
public class FrontendOperations {
    static final int MAX_TOKENS = 2;
    private static volatile FixSet fixes = FixSet.all();
    private static volatile Configuration configuration = Configuration.DEFAULT;

    private final VllmInstance vllm;

    public FrontendOperations() {
        RunRecorder.countInvocation();
        vllm = new VllmInstance(fixes, configuration);
    }

    /** The fixes, and the configuration whose yield conditions decide which frontend awaits suspend. */
    public static void configure(FixSet fixes, Configuration configuration) {
        FrontendOperations.fixes = fixes;
        FrontendOperations.configuration = configuration;
    }

    static FixSet fixes() {
        return fixes;
    }

    static String requestId(int id) {
        return "r" + id;
    }

    /** {@code AsyncLLM.add_request}: ACCEPTED, or REJECTED when the frontend still runs the id. */
    @Operation
    public String addRequest(@Param(name = "id") int id) {
        RuntimeException failure = vllm.asyncLlm().addRequest(requestId(id), MAX_TOKENS).run().failure();
        if (failure instanceof RequestAlreadyRunningException) {
            return "REJECTED";
        }
        if (failure != null) {
            throw failure;
        }
        return "ACCEPTED";
    }

    /** {@code AsyncLLM.abort}. */
    @Operation
    public void abort(@Param(name = "id") int id) {
        vllm.asyncLlm().abort(requestId(id)).run().join();
    }

    /** One EngineCore busy-loop iteration: drain the input socket, then a model step. One busy loop upstream. */
    @Operation(nonParallelGroup = "busyLoop")
    public void engineStep() {
        vllm.engineCore().runBusyLoopOnce();
    }

    /** One pass of the frontend's output handler. Upstream runs exactly one output_handler task. */
    @Operation(nonParallelGroup = "outputHandler")
    public void outputStep() {
        vllm.asyncLlm().outputHandler().run().join();
    }

    @Validate
    public void noDetectorFired() {
        if (!vllm.violations().isEmpty()) {
            throw new IllegalStateException("invariant broken: " + vllm.violations());
        }
    }
}
