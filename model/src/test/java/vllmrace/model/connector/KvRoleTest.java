package vllmrace.model.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.MultiConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;

/** Connector roles as upstream reads them, one test per role, each quoting the line it mirrors. */
class KvRoleTest {
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(4, log), 4, log);

    /** vllm/config/kv_transfer.py@9dc49464: KVProducer = Literal["kv_producer", "kv_both"]; KVConsumer = Literal["kv_consumer", "kv_both"]. */
    @Test
    void kvBothIsAProducerAndAConsumer() {
        assertTrue(KvRole.KV_BOTH.isKvProducer());
        assertTrue(KvRole.KV_BOTH.isKvConsumer());
        assertTrue(KvRole.KV_PRODUCER.isKvProducer());
        assertFalse(KvRole.KV_PRODUCER.isKvConsumer());
        assertFalse(KvRole.KV_CONSUMER.isKvProducer());
        assertTrue(KvRole.KV_CONSUMER.isKvConsumer());
        assertEquals("kv_both", KvRole.KV_BOTH.toString());
    }

    /**
     * base.py@00f4240e KVConnectorBase_V1.requires_kv_delivery: "Defaults to the producer role": {@code return
     * self._kv_transfer_config.is_kv_producer}, so a kv_both offloader (the ALWAYS policy) requires delivery.
     */
    @Test
    void theBaseRequiresKvDeliveryIsTheProducerRoleSoKvBothRequiresIt() {
        TestAsyncConnector prefill = new TestAsyncConnector(kv, SavePolicy.ON_SUCCESS);
        TestAsyncConnector decode = new TestAsyncConnector(kv, SavePolicy.NEVER);
        TestAsyncConnector offloader = new TestAsyncConnector(kv, SavePolicy.ALWAYS);
        assertEquals(KvRole.KV_PRODUCER, prefill.kvRole());
        assertEquals(KvRole.KV_CONSUMER, decode.kvRole());
        assertEquals(KvRole.KV_BOTH, offloader.kvRole());
        assertTrue(prefill.requiresKvDelivery());
        assertFalse(decode.requiresKvDelivery());
        assertTrue(offloader.requiresKvDelivery(), "kv_both is a producer: the base default requires delivery");
        assertFalse(prefill.isKvConsumer());
        assertTrue(decode.isKvConsumer());
        assertTrue(offloader.isKvConsumer());
    }

    /** multi_connector.py@00f4240e: {@code return any(c.requires_kv_delivery for c in self._connectors)}. */
    @Test
    void multiConnectorRequiresKvDeliveryWhenAnyChildDoes() {
        NixlDecodeConnector consumerOnly = new NixlDecodeConnector("NixlConnector", kv, FixSet.all(), KvRole.KV_CONSUMER);
        LmCacheConnector lmcache = new LmCacheConnector("LMCacheMPConnector", kv, true, FixSet.all(), Configuration.DEFAULT);
        assertFalse(consumerOnly.requiresKvDelivery());
        assertTrue(lmcache.requiresKvDelivery(), "LMCache does not override it: kv_both, a producer");
        assertFalse(new MultiConnector(FixSet.all(), KvRole.KV_BOTH, List.of(consumerOnly)).requiresKvDelivery());
        assertTrue(new MultiConnector(FixSet.all(), KvRole.KV_BOTH, List.of(consumerOnly, lmcache)).requiresKvDelivery());
        assertTrue(new MultiConnector(FixSet.all(), List.of(new NixlDecodeConnector("NixlConnector", kv, FixSet.all()))).requiresKvDelivery(),
                "NIXL as deployed (kv_both) requires delivery");
    }

    /**
     * scheduler.py@00f4240e Scheduler.__init__ reads the top-level config: {@code if multiple_inflight_batches and
     * kv_transfer_config.is_kv_consumer}, so a MultiConnector's consumer role is its own kv_role, not its children's.
     */
    @Test
    void multiConnectorIsAConsumerByItsOwnRole() {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NixlConnector", kv, FixSet.all(), KvRole.KV_CONSUMER);
        assertTrue(new MultiConnector(FixSet.all(), List.of(nixl)).isKvConsumer(), "upstream's MultiConnector example is kv_both");
        assertFalse(new MultiConnector(FixSet.all(), KvRole.KV_PRODUCER, List.of(nixl)).isKvConsumer());
        assertEquals(KvRole.KV_PRODUCER, new MultiConnector(FixSet.all(), KvRole.KV_PRODUCER, List.of(nixl)).kvRole());
    }
}
