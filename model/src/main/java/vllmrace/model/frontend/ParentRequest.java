package vllmrace.model.frontend;

import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Mirrors {@code vllm/v1/engine/parallel_sampling.py} (commit 491d9235), {@code ParentRequest}: the frontend's
 * record of one {@code n > 1} request. {@code get_child_info(index)} names child {@code index}
 * {@code "{index}_{parent_id}"} and adds it to {@code child_requests}; {@code get_outputs} (as after PR #28591) removes
 * a child once its completion is finished, does not return a finished child's output twice, and the parent is
 * finished when {@code child_requests} is empty. All children
 * share the parent's {@link RequestOutputCollector}, which gets one final output, when the last child finishes.
 *
 * <p>Used only under the frontend's event loop ({@link OutputProcessor}'s lock); not thread-safe on its own.
 */
public final class ParentRequest {
    private final String requestId;
    private final String externalReqId;
    private final int n;
    private final Set<String> childRequests = new LinkedHashSet<>();
    private final Set<String> created = new LinkedHashSet<>();
    private int numChildrenCreated;

    /**
     * @param requestId     the parent's id as EngineCore-facing ids are built from it (the internal id with #27987)
     * @param externalReqId the caller's id
     * @param n             {@code SamplingParams.n}
     * @throws IllegalArgumentException for a null/empty id or {@code n < 1}
     */
    public ParentRequest(String requestId, String externalReqId, int n) {
        InvalidRequestIdException.check("ParentRequest", requestId);
        InvalidRequestIdException.check("ParentRequest", externalReqId);
        if (n < 1) {
            throw new IllegalArgumentException("ParentRequest: n must be at least 1, got " + n);
        }
        this.requestId = requestId;
        this.externalReqId = externalReqId;
        this.n = n;
    }

    /**
     * {@code ParentRequest.get_child_info(index)}: the child's id {@code "{index}_{parent_id}"}, now tracked in
     * {@code child_requests}.
     *
     * @throws IndexOutOfBoundsException unless {@code 0 <= index < n}
     * @throws IllegalStateException if child {@code index} was already created (state unchanged)
     */
    public String getChildInfo(int index) {
        UpstreamPins.enter(UpstreamPin.PARENT_REQUEST_GET_CHILD_INFO);
        Objects.checkIndex(index, n);
        String childId = childId(index, requestId);
        if (index < numChildrenCreated || childRequests.contains(childId)) {
            throw new IllegalStateException("ParentRequest " + requestId + ": child " + index + " already created");
        }
        if (index != numChildrenCreated) {
            throw new IllegalStateException("ParentRequest " + requestId + ": children are created in order, next is "
                    + numChildrenCreated + ", got " + index);
        }
        numChildrenCreated++;
        childRequests.add(childId);
        created.add(childId);
        return childId;
    }

    /** The child id format of {@code parallel_sampling.py}: {@code f"{index}_{parent_id}"}. */
    public static String childId(int index, String parentId) {
        return index + "_" + parentId;
    }

    /**
     * What {@link #getOutputs} returns: whether the child's output goes to the caller ({@code outputs} non-empty) and
     * whether the parent is finished ({@code not self.child_requests}).
     */
    public record ChildOutputs(boolean deliver, boolean parentFinished) {
    }

    /**
     * {@code ParentRequest.get_outputs(child_request_id, completion_output)} for a streaming ({@code DELTA}) request,
     * as upstream after PR #28591 (docs.vllm.ai, parallel_sampling.py; its test at 133be4fb): a finished output
     * removes the child from {@code child_requests}; a finished output of a child already removed ("finished in a
     * previous batch step and returned to the client earlier") is not returned again ({@code ([], finished)}).
     * Before #28591 (commit 491d9235) the second removal raised KeyError. Simplified: {@code FINAL_ONLY}'s
     * {@code output_aggregator} is not modelled (the model's requests stream).
     *
     * @throws IllegalArgumentException for an id that was never a child of this parent (state unchanged)
     */
    public ChildOutputs getOutputs(String childRequestId, boolean childFinished) {
        UpstreamPins.enter(UpstreamPin.PARENT_REQUEST_GET_OUTPUTS);
        if (childRequestId == null || !created.contains(childRequestId)) {
            throw new IllegalArgumentException("ParentRequest " + requestId + " has no child " + childRequestId);
        }
        boolean alreadyFinishedAndReturned = false;
        if (childFinished && !childRequests.remove(childRequestId)) {
            alreadyFinishedAndReturned = true;
        }
        return new ChildOutputs(!alreadyFinishedAndReturned, childRequests.isEmpty());
    }

    public String requestId() {
        return requestId;
    }

    public String externalReqId() {
        return externalReqId;
    }

    public int n() {
        return n;
    }

    /** {@code child_requests}: children not finished yet. */
    public Set<String> childRequests() {
        return java.util.Collections.unmodifiableSet(new LinkedHashSet<>(childRequests)); // creation order: Set.copyOf's is JVM-salted
    }

    /** True once every created child finished. */
    public boolean finished() {
        return childRequests.isEmpty();
    }

    @Override
    public String toString() {
        return "ParentRequest(" + requestId + ", children=" + childRequests + ")";
    }
}
