package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * {@code OutputProcessor.abort_requests} on an {@code n = 2} request, by each kind of id (#51629): the external id pops
 * the children's states and, upstream, keeps the parent; the parent's own id drops it, internal or not.
 */
class OutputProcessorAbortTest {
    private static final FixSet UPSTREAM = FixSet.all().without(Fix.PARENT_RELEASED_ON_ABORT);

    /** Parent {@code parentId} of external id P with two children, tracked. */
    private static OutputProcessor twoChildren(FixSet fixes, String parentId) {
        OutputProcessor op = new OutputProcessor(fixes);
        ParentRequest parent = new ParentRequest(parentId, "P", 2);
        RequestOutputCollector queue = new RequestOutputCollector();
        for (int i = 0; i < 2; i++) {
            op.addRequest(new EngineCoreRequest(parent.getChildInfo(i), i + 1, 4), "P", parent, i, queue, 0);
        }
        return op;
    }

    @Test
    void aLeakedParentIsSeenBesideAnotherLiveRequest() {
        OutputProcessor op = twoChildren(UPSTREAM, "P-1");
        op.addRequest(new EngineCoreRequest("Y-2", 3, 4), "Y", null, 0, new RequestOutputCollector(), 0);
        assertEquals(List.of(), op.leakedParentRequests(), "P-1 has live children");
        op.abortRequests(List.of("P"));
        assertEquals(List.of("P-1"), op.leakedParentRequests(), "FE4 does not wait for request_states to empty");
    }

    @Test
    void theExternalIdResolvesToTheChildrenAndUpstreamKeepsTheParent() {
        OutputProcessor op = twoChildren(UPSTREAM, "P"); // ids not randomized: the parent's id is the external one
        assertEquals(List.of("0_P", "1_P"), op.flattenReqToAbort(List.of("P")));
        assertEquals(List.of("0_P", "1_P"), op.abortRequests(List.of("P")));
        assertEquals(Set.of("P"), op.parentRequestsSnapshot().keySet(), "#51629: the parent stays");
        assertEquals(List.of("P"), op.leakedParentRequests());
    }

    @Test
    void withTheFixTheExternalIdDropsTheParentWithItsLastChild() {
        OutputProcessor op = twoChildren(FixSet.all(), "P");
        assertEquals(List.of("0_P", "1_P"), op.abortRequests(List.of("P"), false));
        assertEquals(Set.of(), op.parentRequestsSnapshot().keySet());
    }

    @Test
    void theParentsOwnIdDropsItInternalOrNot() {
        for (boolean internal : List.of(true, false)) {
            OutputProcessor op = twoChildren(UPSTREAM, "P-1");
            assertEquals(List.of("0_P-1", "1_P-1"), op.flattenReqToAbort(List.of("P-1"), internal));
            assertEquals(List.of("0_P-1", "1_P-1"), op.abortRequests(List.of("P-1"), internal));
            assertEquals(Set.of(), op.parentRequestsSnapshot().keySet(), "the elif branch, internal " + internal);
        }
    }

    @Test
    void anInternalAbortNeverLooksUpExternalIds() {
        OutputProcessor op = twoChildren(UPSTREAM, "P-1");
        assertEquals(List.of(), op.abortRequests(List.of("P"), true), "P is no internal id");
        assertEquals(2, op.requestStatesSnapshot().size());
        assertThrows(InvalidRequestIdException.class, () -> op.abortRequests(List.of(""), true));
        assertEquals(2, op.requestStatesSnapshot().size(), "a bad id changes nothing");
    }
}
