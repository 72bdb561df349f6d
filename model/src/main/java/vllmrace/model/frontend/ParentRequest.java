package vllmrace.model.frontend;

import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * Mirrors {@code vllm/v1/engine/parallel_sampling.py} (commit 491d9235), {@code ParentRequest}: the frontend's
 * record of one {@code n > 1} request. {@code get_child_info(index)} names child {@code index}
 * {@code "{index}_{parent_id}"} and adds it to {@code child_requests}; {@code get_outputs} removes a child once
 * its completion is finished, and the parent is finished when {@code child_requests} is empty. All children
 * share the parent's {@link RequestOutputCollector}, which gets one final output, when the last child finishes.
 *
 * <p>Used only under the frontend's event loop ({@link OutputProcessor}'s lock); not thread-safe on its own.
 */
public final class ParentRequest {
    private final String requestId;
    private final String externalReqId;
    private final int n;
    private final Set<String> childRequests = new LinkedHashSet<>();
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
        return childId;
    }

    /** The child id format of {@code parallel_sampling.py}: {@code f"{index}_{parent_id}"}. */
    public static String childId(int index, String parentId) {
        return index + "_" + parentId;
    }

    /**
     * {@code ParentRequest.get_outputs(child_request_id, completion_output)}, for its finish bookkeeping: a finished
     * child leaves {@code child_requests}.
     *
     * @return true when this call finished the parent (its last child finished)
     * @throws IllegalArgumentException for an id that is not a live child of this parent (state unchanged)
     */
    public boolean getOutputs(String childRequestId, boolean childFinished) {
        if (!childRequests.contains(childRequestId)) {
            throw new IllegalArgumentException("ParentRequest " + requestId + " has no live child " + childRequestId);
        }
        if (!childFinished) {
            return false;
        }
        childRequests.remove(childRequestId);
        return childRequests.isEmpty();
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
        return Set.copyOf(childRequests);
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
