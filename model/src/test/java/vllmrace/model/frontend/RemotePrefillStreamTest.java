package vllmrace.model.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/** The decode side's generate() as the prefill side sees it: what each order of add and cancellation sends. */
class RemotePrefillStreamTest {
    private final List<String> sent = new ArrayList<>();

    private RemotePrefillStream stream(FixSet fixes) {
        return new RemotePrefillStream(fixes, "R", id -> sent.add("pull " + id), id -> sent.add("release " + id));
    }

    @Test
    void addedThenAdmittedItPullsOnce() {
        RemotePrefillStream s = stream(FixSet.none());
        s.awaitInputs();
        s.addRequest();
        s.admitAndPull();
        s.admitAndPull();
        assertEquals(List.of("pull R"), sent);
        s.cancel();
        assertTrue(s.deliverCancellation());
        assertEquals(List.of("pull R"), sent, "pulled already: the abort after it sends nothing more");
    }

    @Test
    void cancelledAfterTheAddTheAbortReleases() {
        RemotePrefillStream s = stream(FixSet.none());
        s.awaitInputs();
        s.addRequest();
        s.cancel();
        assertTrue(s.deliverCancellation());
        s.admitAndPull();
        assertEquals(List.of("release R"), sent);
        assertFalse(s.alive());
    }

    @Test
    void cancelledBeforeTheAddOnlyTheFixSendsTheNotice() {
        for (FixSet fixes : List.of(FixSet.none(), FixSet.none().with(Fix.NOTIFY_REJECT_ON_PRE_ADD_CANCEL))) {
            sent.clear();
            RemotePrefillStream s = stream(fixes);
            s.cancel();
            s.awaitInputs(); // the CancelledError lands here: q is None
            s.addRequest(); // the task ended: nothing is added
            s.admitAndPull();
            assertFalse(s.added());
            assertEquals(fixes.isOn(Fix.NOTIFY_REJECT_ON_PRE_ADD_CANCEL) ? List.of("release R") : List.of(), sent, fixes.toString());
        }
    }

    @Test
    void badInputIsRefused() {
        assertThrows(InvalidRequestIdException.class, () -> new RemotePrefillStream(FixSet.none(), "", id -> { }, id -> { }));
        assertThrows(NullPointerException.class, () -> new RemotePrefillStream(FixSet.none(), "R", null, id -> { }));
        RemotePrefillStream s = stream(FixSet.none());
        assertThrows(IllegalStateException.class, s::addRequest, "add_request's awaits come first");
        assertTrue(s.alive());
        assertFalse(s.added());
        assertEquals(List.of(), sent);
    }
}
