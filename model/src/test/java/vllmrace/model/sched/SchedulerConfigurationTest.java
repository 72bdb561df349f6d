package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;

/** What a scheduler says of its own configuration, and a request's refusal of a bad id, each both ways. */
class SchedulerConfigurationTest {
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(4, log), 4, log);

    @Test
    void requiresKvDeliveryIsTheConnectorsAndFalseWithoutOne() {
        assertFalse(new Scheduler(FixSet.all(), log).requiresKvDelivery(), "no connector");
        assertFalse(new Scheduler(FixSet.all(), log, kv, new TestAsyncConnector(kv, SavePolicy.NEVER)).requiresKvDelivery(),
                "a kv_consumer");
        assertTrue(new Scheduler(FixSet.all(), log, kv, new TestAsyncConnector(kv, SavePolicy.ON_SUCCESS)).requiresKvDelivery(),
                "a kv_producer");
    }

    @Test
    void kindIsTheOneItWasBuiltAs() {
        assertEquals(SchedulerKind.ASYNC_SCHEDULER, new Scheduler(FixSet.all(), log, kv, null).kind());
        assertEquals(SchedulerKind.SCHEDULER, new Scheduler(FixSet.all(), log, kv, null, KvLoadFailurePolicy.FAIL,
                SchedulerKind.SCHEDULER, 1).kind());
    }

    @Test
    void aRequestRefusesANullOrEmptyIdSayingWhich() {
        assertEquals("request_id must be a non-empty string, got null",
                assertThrows(IllegalArgumentException.class, () -> new Request(null, 0, 4, 1)).getMessage());
        assertEquals("request_id must be a non-empty string, got \"\"",
                assertThrows(IllegalArgumentException.class, () -> new Request("", 0, 4, 1)).getMessage());
    }
}
