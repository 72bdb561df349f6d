package vllmrace.model.connector.multi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;

/**
 * The NIXL push consumer (push_worker.py {@code _get_new_notifs} on D): a registered request is reported once one
 * notification per prefill rank arrived; a failed post sends nothing (it waits) unless #50754's PUSH_FAIL counts.
 */
class NixlPushConsumerTest {
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
    private final Request r = new Request("R", 1, 4, 1);

    private NixlPushConsumer registered(FixSet fixes) {
        NixlPushConsumer nixl = new NixlPushConsumer("NixlPushConnector", kv, fixes);
        nixl.remotePush("R", 4, 2);
        assertTrue(nixl.getNumNewMatchedTokens(r, 0).loadKvAsync());
        kv.allocateSlots("R", 4);
        nixl.updateStateAfterAlloc(r, kv.getBlockIds("R"), 4);
        return nixl;
    }

    @Test
    void oneNotificationPerRankCompletesThePush() {
        NixlPushConsumer nixl = registered(FixSet.upstreamMain());
        nixl.writeLands("R");
        assertEquals(Set.of(), nixl.getFinished(Set.of()).finishedRecving(), "1 of 2");
        nixl.writeLands("R");
        assertEquals(new KvConnectorOutput(Set.of(), Set.of("R"), Set.of()), nixl.getFinished(Set.of()));
        assertTrue(nixl.isIdle());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void aFailedPostLeavesTheCountShortBefore50754() {
        NixlPushConsumer nixl = registered(FixSet.upstreamMain());
        nixl.writeLands("R");
        nixl.postFails("R");
        assertEquals(0, nixl.finishInFlightTransfers(), "nothing else will come");
        assertEquals(Set.of(), nixl.getFinished(Set.of()).finishedRecving());
        assertFalse(nixl.isIdle());
        assertTrue(nixl.hasPendingTransfer("R"));
    }

    @Test
    void with50754ThePushFailCountsAndFailsTheRequest() {
        NixlPushConsumer nixl = registered(FixSet.all());
        nixl.postFails("R");
        nixl.writeLands("R");
        assertEquals(new KvConnectorOutput(Set.of(), Set.of("R"), Set.copyOf(kv.getBlockIds("R"))), nixl.getFinished(Set.of()));
        assertTrue(nixl.isIdle());
    }

    @Test
    void badPushesAreRefusedAndChangeNothing() {
        assertThrows(IllegalArgumentException.class, () -> new NixlPushConsumer("N", kv, FixSet.all()).remotePush("R", 4, 0));
        NixlPushConsumer nixl = registered(FixSet.all());
        assertThrows(UnknownTransferException.class, () -> nixl.writeLands("X"), "X is not registered");
        assertThrows(NullPointerException.class, () -> nixl.postFails(null));
        nixl.writeLands("R");
        nixl.writeLands("R");
        String done = nixl.progressSignature();
        assertThrows(UnknownTransferException.class, () -> nixl.writeLands("R"), "both ranks already wrote");
        assertThrows(UnknownTransferException.class, () -> nixl.postFails("R"));
        assertEquals(done, nixl.progressSignature());
        assertEquals(Set.of("R"), nixl.getFinished(Set.of()).finishedRecving());
        assertTrue(log.isEmpty(), log.toString());
    }
}
