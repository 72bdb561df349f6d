package vllmrace.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;

/** The one wiring of an EngineCore process: built in steps, each step's bad input refused with a specific message. */
class EngineProcessTest {

    @Test
    void theStepsWireOneProcessAroundOneLog() {
        EngineProcess.Builder b = EngineProcess.builder(FixSet.upstreamMain(), Configuration.DEFAULT).kvCache(3).batchQueueSize(2);
        TestAsyncConnector connector = new TestAsyncConnector(b.kvCacheManager(), TestAsyncConnector.SavePolicy.NEVER);
        EngineProcess p = b.build(connector, scheduler -> connector);
        assertSame(connector, p.connector());
        assertSame(b.kvCacheManager(), p.kvCacheManager());
        assertEquals(3, p.blockPool().numFreeBlocks());
        assertEquals(2, p.batchQueueSize());
        assertSame(b.violations(), p.violations());
        assertSame(b.stepLog(), p.stepLog());
    }

    @Test
    void withoutAConnectorItIsTheFrontendModelsEngine() {
        EngineProcess p = EngineProcess.builder(FixSet.upstreamMain(), Configuration.DEFAULT).build();
        assertNull(p.connector());
        assertNull(p.kvCacheManager());
        assertEquals(1, p.batchQueueSize());
        assertTrue(p.engineCore().isIdle());
    }

    @Test
    void badStepsAreRefusedWithWhatIsWrong() {
        EngineProcess.Builder b = EngineProcess.builder(FixSet.upstreamMain(), Configuration.DEFAULT);
        assertEquals("numGpuBlocks must be >= 1, got 0", assertThrows(IllegalArgumentException.class, () -> b.kvCache(0)).getMessage());
        assertEquals("batchQueueSize must be >= 1, got 0", assertThrows(IllegalArgumentException.class, () -> b.batchQueueSize(0)).getMessage());
        assertTrue(assertThrows(IllegalStateException.class, b::kvCacheManager).getMessage().contains("kvCache(numGpuBlocks) first"));
        b.batchQueueSize(2);
        assertTrue(assertThrows(IllegalStateException.class, b::build).getMessage().contains("one batch at a time"));
        b.batchQueueSize(1);
        b.build();
        assertTrue(assertThrows(IllegalStateException.class, b::build).getMessage().contains("built its process already"));
        assertThrows(NullPointerException.class, () -> EngineProcess.builder(null, Configuration.DEFAULT));
        assertThrows(NullPointerException.class, () -> EngineProcess.builder(FixSet.upstreamMain(), null));
    }
}
