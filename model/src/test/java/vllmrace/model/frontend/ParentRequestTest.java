package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link ParentRequest} on its own: child ids, child bookkeeping, and bad input (specific exception, state unchanged). */
class ParentRequestTest {

    @Test
    void childIdsAreIndexUnderscoreParentAndAreTrackedUntilFinished() {
        ParentRequest parent = new ParentRequest("P", "P", 2);
        assertEquals("0_P", parent.getChildInfo(0));
        assertEquals("1_P", parent.getChildInfo(1));
        assertEquals(Set.of("0_P", "1_P"), parent.childRequests());
        assertEquals(new ParentRequest.ChildOutputs(true, false), parent.getOutputs("0_P", false), "an unfinished output leaves the child in place");
        assertEquals(new ParentRequest.ChildOutputs(true, false), parent.getOutputs("0_P", true));
        assertEquals(Set.of("1_P"), parent.childRequests());
        assertEquals(new ParentRequest.ChildOutputs(false, false), parent.getOutputs("0_P", true),
                "#28591: a finished child's output is not returned again");
        assertEquals(new ParentRequest.ChildOutputs(true, true), parent.getOutputs("1_P", true), "the last child finishes the parent");
        assertEquals(new ParentRequest.ChildOutputs(false, true), parent.getOutputs("1_P", true), "([], True), as upstream's test");
        assertTrue(parent.finished());
    }

    @Test
    void badInputRaisesAndLeavesTheParentUnchanged() {
        assertThrows(IllegalArgumentException.class, () -> new ParentRequest("P", "P", 0));
        assertThrows(IllegalArgumentException.class, () -> new ParentRequest("P", "P", -1));
        assertThrows(InvalidRequestIdException.class, () -> new ParentRequest(null, "P", 2));
        assertThrows(InvalidRequestIdException.class, () -> new ParentRequest("P", "", 2));

        ParentRequest parent = new ParentRequest("P-1", "P", 2);
        assertThrows(IndexOutOfBoundsException.class, () -> parent.getChildInfo(2));
        assertThrows(IndexOutOfBoundsException.class, () -> parent.getChildInfo(-1));
        assertThrows(IllegalStateException.class, () -> parent.getChildInfo(1), "children are created in order");
        assertEquals("0_P-1", parent.getChildInfo(0));
        assertThrows(IllegalStateException.class, () -> parent.getChildInfo(0), "a child is created once");
        assertThrows(IllegalArgumentException.class, () -> parent.getOutputs("9_P-1", true), "never a child");
        assertThrows(IllegalArgumentException.class, () -> parent.getOutputs("1_P-1", true), "not created yet");
        assertThrows(IllegalArgumentException.class, () -> parent.getOutputs(null, true));
        assertEquals(Set.of("0_P-1"), parent.childRequests(), "state unchanged by the bad calls");
        assertTrue(parent.getOutputs("0_P-1", true).parentFinished());
    }

    @Test
    void samplingParamsRejectBadValues() {
        assertThrows(IllegalArgumentException.class, () -> new SamplingParams(0, 4, 0));
        assertThrows(IllegalArgumentException.class, () -> new SamplingParams(1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new SamplingParams(1, 4, -1));
        assertEquals(new SamplingParams(1, 4, 0), SamplingParams.maxTokens(4));
    }
}
