package vllmrace.model.connector.multi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;

/**
 * What a request that ends while the child's own load of it is unreported gets back (SynthesizedSendForAbortedRetrieve):
 * LMCache's MP connector returns True and its worker makes up a finished_sending at the next poll that sees the id
 * (LMCache #4938) unless LMCache #4939's proposal is on. A request the MP connector loaded and reported starts no save:
 * its send is made up too. An offloader makes up nothing and runs no store for what it loaded.
 */
class LmCacheMadeUpSendTest {
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
    private final Request r = new Request("R", 1, 4, 1);

    private LmCacheConnector loading(LmCacheConnector child) {
        child.cachedPrefix("R", 4);
        assertTrue(child.getNumNewMatchedTokens(r, 0).loadKvAsync());
        kv.allocateSlots("R", 4);
        child.updateStateAfterAlloc(r, kv.getBlockIds("R"), 4);
        assertTrue(child.isLoadInFlight("R"));
        return child;
    }

    @Test
    void theMpConnectorMakesUpASendForAnAbortedRetrieve() {
        LmCacheConnector lmcache = loading(new LmCacheConnector("LMCacheMPConnector", kv, false, FixSet.upstreamMain(), Configuration.DEFAULT));
        assertEquals(new RequestFinishedResult(true, null), lmcache.requestFinished(r, kv.getBlockIds("R")));
        assertEquals(Set.of(), lmcache.getFinished(Set.of()).finishedSending(), "not before the id reaches the worker");
        KvConnectorOutput out = lmcache.getFinished(Set.of("R"));
        assertEquals(Set.of("R"), out.finishedSending(), "ret_stores: an engine-finished id with no store future");
        assertEquals(Set.of(), out.finishedRecving(), "the retrieve is still in flight");
        assertFalse(lmcache.isIdle(), "the retrieve still owes its finished_recving: the second terminal event");
        lmcache.completeLoad("R");
        assertEquals(Set.of("R"), lmcache.getFinished(Set.of()).finishedRecving());
        assertTrue(lmcache.isIdle());
    }

    @Test
    void with4939TheRetrievesReportIsTheOnlyOne() {
        LmCacheConnector lmcache = loading(new LmCacheConnector("LMCacheMPConnector", kv, true, FixSet.upstreamMain()
                .with(Fix.LMCACHE_MP_ABORTED_RETRIEVE_NOT_STORED), Configuration.DEFAULT));
        assertTrue(lmcache.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "return True, None");
        assertEquals(Set.of(), lmcache.getFinished(Set.of("R")).finishedSending());
        lmcache.completeLoad("R");
        KvConnectorOutput out = lmcache.getFinished(Set.of());
        assertEquals(Set.of("R"), out.finishedRecving());
        assertEquals(Set.of(), out.finishedSending());
        assertTrue(lmcache.isIdle(), "no save was started of blocks still being written");
    }

    @Test
    void anOffloaderMakesUpNoSend() {
        LmCacheConnector offloader = LmCacheConnector.offloader("OffloadingConnector", kv, FixSet.upstreamMain(), Configuration.DEFAULT);
        kv.allocateSlots("R", 4);
        assertTrue(offloader.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "its save of R runs");
        assertEquals(Set.of(), offloader.getFinished(Set.of("R")).finishedSending(), "reported when the save lands, not made up");
        offloader.completeSave("R");
        assertEquals(Set.of("R"), offloader.getFinished(Set.of()).finishedSending());
    }

    @Test
    void anOffloaderRunsNoStoreForWhatItLoaded() {
        LmCacheConnector offloader = loading(LmCacheConnector.offloader("OffloadingConnector", kv, FixSet.upstreamMain(), Configuration.DEFAULT));
        assertEquals(RequestFinishedResult.FREE_NOW, offloader.requestFinished(r, kv.getBlockIds("R")), "still loading: no store");
        offloader.completeLoad("R");
        assertEquals(Set.of("R"), offloader.getFinished(Set.of("R")).finishedRecving());
        assertEquals(Set.of(), offloader.getFinished(Set.of("R")).finishedSending(), "nothing made up");
    }

    @Test
    void aLoadedRequestIsNotSavedAgainButSentMadeUp() {
        LmCacheConnector lmcache = loading(new LmCacheConnector("LMCacheMPConnector (saving)", kv, true, FixSet.upstreamMain(), Configuration.DEFAULT));
        lmcache.completeLoad("R");
        assertEquals(Set.of("R"), lmcache.getFinished(Set.of()).finishedRecving());
        assertEquals(new RequestFinishedResult(true, null), lmcache.requestFinished(r, kv.getBlockIds("R")),
                "its hit counts as stored: no store runs, and request_finished returns True");
        assertEquals(Set.of("R"), lmcache.getFinished(Set.of("R")).finishedSending(), "the made-up send, its one terminal event");
        assertTrue(lmcache.isIdle());
    }
}
