package vllmrace.model.frontend;

import vllmrace.model.VllmInstance;
import vllmrace.model.fix.FixSet;

/** Broken-model frontend states no path of the model reaches, for the FE4 detectors' own tests. */
public final class FrontendSeams {
    private FrontendSeams() {
    }

    /** FE4: the children's states are gone, the parent is still in {@code parent_requests}. */
    public static VllmInstance parentOutlivesItsChildren() {
        VllmInstance vllm = withParallelRequest();
        OutputProcessor op = vllm.outputProcessor();
        op.requestStatesSnapshot().forEach(state -> op.dropStateOnly(state.requestId()));
        return vllm;
    }

    /** FE4's converse: a child's state names a parent {@code parent_requests} no longer holds. */
    public static VllmInstance childOutlivesItsParent() {
        VllmInstance vllm = withParallelRequest();
        OutputProcessor op = vllm.outputProcessor();
        op.parentRequestsSnapshot().keySet().forEach(op::dropParentOnly);
        return vllm;
    }

    private static VllmInstance withParallelRequest() {
        VllmInstance vllm = new VllmInstance(FixSet.all());
        vllm.asyncLlm().addRequest("P", new SamplingParams(2, 4, 0)).run().join();
        vllm.engineCore().processInputQueue();
        return vllm;
    }
}
