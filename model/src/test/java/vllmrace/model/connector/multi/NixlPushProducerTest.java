package vllmrace.model.connector.multi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestSeams;
import vllmrace.model.sched.RequestStatus;

/**
 * The NIXL push producer (push_scheduler.py {@code request_finished}, push_worker.py {@code get_finished}): a finished
 * request's blocks leased, its WRITEs posted per D rank, its completion reported as the fixes say, the reaper at the
 * lease's expiry; and bad input refused with state intact.
 */
class NixlPushProducerTest {
    private static final FixSet AFTER_56104 = FixSet.all().without(Fix.PUSH_SEND_REPORTED_PER_DIRECTION);
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
    private final Request r = new Request("R", 1, 3, 1);

    /** R finished with one block, leased, its WRITEs posted to {@code ranks} D ranks. */
    private NixlPushProducer pushing(FixSet fixes, int ranks) {
        NixlPushProducer push = new NixlPushProducer("NixlPushConnector", kv, fixes);
        kv.allocateSlots("R", 4);
        RequestSeams.setStatus(r, RequestStatus.FINISHED_LENGTH_CAPPED);
        assertTrue(push.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "a finished request's blocks are leased");
        assertTrue(push.isLeased("R"));
        push.postWrites("R", ranks);
        return push;
    }

    @Test
    void aPushIsReportedOnceEveryWriteIsDone() {
        NixlPushProducer push = pushing(FixSet.all(), 2);
        push.completeWrite("R", 1);
        assertEquals(Set.of(), push.getFinished(Set.of("R")).finishedSending(), "handle 0 still in progress");
        push.completeWrite("R", 0);
        assertEquals(Set.of("R"), push.getFinished(Set.of()).finishedSending());
        assertTrue(push.isIdle());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void beforeTheHandleReworkEveryDonePushIsReported() {
        NixlPushProducer push = pushing(FixSet.all().without(Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP)
                .without(Fix.PUSH_SEND_REPORTED_PER_DIRECTION), 1);
        push.completeWrite("R", 0);
        assertEquals(Set.of("R"), push.getFinished(Set.of("R")).finishedSending());
        assertTrue(push.isIdle());
    }

    /** #58188's report: the completion is dropped, only the reaper releases R, and the detector records it then. */
    @Test
    void afterTheHandleReworkACompletedPushWaitsForTheLease() {
        NixlPushProducer push = pushing(AFTER_56104, 2);
        push.finishInFlightTransfers();
        for (int poll = 1; poll < NixlPushProducer.LEASE_POLLS; poll++) {
            assertEquals(Set.of(), push.getFinished(Set.of("R")).finishedSending(), "poll " + poll);
            assertTrue(push.hasPendingTransfer("R"), "the lease still holds R");
        }
        assertTrue(log.isEmpty(), "nothing recorded before the lease expires: " + log);
        assertEquals(Set.of("R"), push.getFinished(Set.of()).finishedSending(), "the reaper releases R");
        assertEquals(List.of(ViolationKind.SEND_COMPLETION_NEVER_REPORTED), log.all().stream().map(v -> v.kind()).toList());
        assertTrue(push.isIdle());
    }

    /** A lease whose push never completed expires as upstream's does, and that is no lost report. */
    @Test
    void aLeaseWithNoCompletedPushExpiresSilently() {
        NixlPushProducer push = new NixlPushProducer("NixlPushConnector", kv, AFTER_56104);
        kv.allocateSlots("R", 4);
        RequestSeams.setStatus(r, RequestStatus.FINISHED_STOPPED);
        push.requestFinished(r, kv.getBlockIds("R"));
        for (int poll = 1; poll < NixlPushProducer.LEASE_POLLS; poll++) {
            assertEquals(Set.of(), push.getFinished(Set.of("R")).finishedSending());
        }
        assertEquals(Set.of("R"), push.getFinished(Set.of()).finishedSending());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** With #58188 a failed WRITE is not a success; the lease releases the request, and that is no lost report. */
    @Test
    void withTheFixAFailedPushIsLeftToTheLease() {
        NixlPushProducer push = pushing(FixSet.all(), 2);
        push.failWrite("R", 0);
        push.completeWrite("R", 1);
        assertEquals(Set.of(), push.getFinished(Set.of("R")).finishedSending());
        for (int poll = 2; poll < NixlPushProducer.LEASE_POLLS; poll++) {
            assertEquals(Set.of(), push.getFinished(Set.of()).finishedSending());
        }
        assertEquals(Set.of("R"), push.getFinished(Set.of()).finishedSending());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** A push is reported only once its id was seen in finished_req_ids (CN2). */
    @Test
    void aDonePushWaitsUntilItsIdWasSeen() {
        NixlPushProducer push = pushing(FixSet.all(), 1);
        push.completeWrite("R", 0);
        assertEquals(Set.of(), push.getFinished(Set.of()).finishedSending());
        assertEquals(Set.of("R"), push.getFinished(Set.of("R")).finishedSending());
    }

    @Test
    void aFinishedRequestNeedsAFinishedStatus() {
        assertThrows(IllegalArgumentException.class, () -> Request.finished("R", 1, 3, 1, RequestStatus.RUNNING));
        assertEquals(RequestStatus.FINISHED_STOPPED, Request.finished("R", 1, 3, 1, RequestStatus.FINISHED_STOPPED).status());
    }

    @Test
    void anAbortedRequestIsNotLeased() {
        NixlPushProducer push = new NixlPushProducer("NixlPushConnector", kv, FixSet.all());
        kv.allocateSlots("R", 4);
        RequestSeams.setStatus(r, RequestStatus.FINISHED_ABORTED);
        assertFalse(push.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks());
        assertFalse(push.requestFinished(r, List.of()).delayFreeBlocks(), "nothing to send without blocks");
        assertTrue(push.isIdle());
    }

    /** R and S leased in that order, lease 3 polls; S's blocks come from a second allocation. */
    private NixlPushProducer twoLeases(FixSet fixes) {
        NixlPushProducer push = new NixlPushProducer("NixlPushConnector", kv, fixes, 3);
        kv.allocateSlots("R", 4);
        kv.allocateSlots("S", 4);
        RequestSeams.setStatus(r, RequestStatus.FINISHED_LENGTH_CAPPED);
        Request s = Request.finished("S", 2, 3, 1, RequestStatus.FINISHED_LENGTH_CAPPED);
        push.requestFinished(r, kv.getBlockIds("R"));
        push.requestFinished(s, kv.getBlockIds("S"));
        return push;
    }

    /** #58222: a heartbeat renews the head lease in place; the reaper stops there and S's expired lease stays. */
    @Test
    void aRenewedHeadLeaseStrandsTheExpiredOneBehindIt() {
        NixlPushProducer push = twoLeases(AFTER_56104.without(Fix.REAP_EVERY_EXPIRED_LEASE));
        push.getFinished(Set.of("R", "S")); // poll 1
        push.heartbeat("R", "unknown"); // an id not leased here is ignored, as upstream does
        assertEquals(Set.of(), push.getFinished(Set.of()).finishedSending(), "poll 2: R renewed to poll 4");
        assertEquals(Set.of(), push.getFinished(Set.of()).finishedSending(), "poll 3: R live at the head, S expired behind it");
        assertEquals(List.of(ViolationKind.LEASE_EXPIRED_NOT_RELEASED), log.all().stream().map(v -> v.kind()).toList());
        assertTrue(log.all().get(0).detail().contains("S"), log.toString());
        assertEquals(Set.of("R", "S"), push.getFinished(Set.of()).finishedSending(), "poll 4: R expires, then S behind it");
        assertEquals(1, log.all().size(), "recorded once");
        assertTrue(push.isIdle());
    }

    /** #50789: every expired lease is reaped; the renewed one stays. */
    @Test
    void withTheFullScanTheExpiredLeaseIsReleasedOnTime() {
        NixlPushProducer push = twoLeases(FixSet.all());
        push.getFinished(Set.of("R", "S"));
        push.heartbeat("R");
        push.getFinished(Set.of());
        assertEquals(Set.of("S"), push.getFinished(Set.of()).finishedSending(), "poll 3: S reaped behind the live R");
        assertTrue(push.isLeased("R"));
        assertEquals(Set.of("R"), push.getFinished(Set.of()).finishedSending());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** A heartbeat handled early extends nothing: max(old, now + 2) is the old expiry. */
    @Test
    void anEarlyHeartbeatExtendsNothing() {
        NixlPushProducer push = twoLeases(AFTER_56104.without(Fix.REAP_EVERY_EXPIRED_LEASE));
        push.heartbeat("R");
        push.getFinished(Set.of("R", "S")); // poll 1: R stays at poll 3
        push.getFinished(Set.of());
        assertEquals(Set.of("R", "S"), push.getFinished(Set.of()).finishedSending());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void badHeartbeatsAndLeasesAreRefused() {
        NixlPushProducer push = twoLeases(FixSet.all());
        String before = push.progressSignature();
        assertThrows(IllegalArgumentException.class, () -> push.heartbeat(), "a heartbeat names a request");
        assertThrows(NullPointerException.class, () -> push.heartbeat((String) null));
        assertThrows(NullPointerException.class, () -> push.heartbeat((String[]) null));
        assertEquals(before, push.progressSignature(), "the refused heartbeats changed nothing");
        assertThrows(IllegalArgumentException.class, () -> new NixlPushProducer("P", kv, FixSet.all(), 0));
    }

    @Test
    void badInputIsRefusedAndChangesNothing() {
        NixlPushProducer push = pushing(FixSet.all(), 2);
        String before = push.progressSignature();
        assertThrows(UnknownTransferException.class, () -> push.completeWrite("R", 2), "no handle 2");
        assertThrows(UnknownTransferException.class, () -> push.failWrite("R", -1), "no handle -1");
        assertThrows(UnknownTransferException.class, () -> push.completeWrite("X", 0), "no push of X");
        assertThrows(UnknownTransferException.class, () -> push.postWrites("R", 1), "R's WRITEs were posted already");
        assertThrows(UnknownTransferException.class, () -> push.postWrites("X", 1), "a lease of an unknown request");
        assertThrows(IllegalArgumentException.class, () -> push.postWrites("R", 0), "no target rank");
        assertThrows(NullPointerException.class, () -> push.completeWrite(null, 0));
        assertThrows(NullPointerException.class, () -> push.getFinished(null));
        assertEquals(before, push.progressSignature(), "the refused calls changed nothing");
        push.completeWrite("R", 0);
        String done0 = push.progressSignature();
        assertThrows(UnknownTransferException.class, () -> push.completeWrite("R", 0), "handle 0 is done already");
        assertEquals(done0, push.progressSignature());
        push.completeWrite("R", 1);
        assertEquals(Set.of("R"), push.getFinished(Set.of("R")).finishedSending());
        assertTrue(log.isEmpty(), log.toString());
    }
}
