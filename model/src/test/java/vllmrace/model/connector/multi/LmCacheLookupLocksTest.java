package vllmrace.model.connector.multi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;

/**
 * The LMCache MP connector's lookup locks (lmcache_mp_connector.py {@code get_num_new_matched_tokens},
 * {@code update_state_after_alloc}, {@code _cleanup_request_tracker}): taken by the lookup, released by
 * {@code update_state_after_alloc}, forgotten by the cleanup of a request that ends before it (#44100) unless #44101.
 */
class LmCacheLookupLocksTest {
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
    private final Request r = new Request("R", 1, 4, 1);

    private LmCacheConnector lookedUp(FixSet fixes) {
        LmCacheConnector lmcache = new LmCacheConnector("LMCacheMPConnector", kv, false, fixes, Configuration.DEFAULT);
        lmcache.cachedPrefix("R", 4);
        assertTrue(lmcache.getNumNewMatchedTokens(r, 0).loadKvAsync());
        assertTrue(lmcache.holdsLookupLocks("R"), "the lookup read-locks the matched chunks");
        return lmcache;
    }

    @Test
    void allocationReleasesTheLocks() {
        LmCacheConnector lmcache = lookedUp(FixSet.upstreamMain());
        kv.allocateSlots("R", 4);
        lmcache.updateStateAfterAlloc(r, kv.getBlockIds("R"), 4);
        assertFalse(lmcache.holdsLookupLocks("R"));
        lmcache.requestFinished(r, kv.getBlockIds("R"));
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void notChosenTheLocksAreReleasedToo() {
        LmCacheConnector lmcache = lookedUp(FixSet.upstreamMain());
        lmcache.updateStateAfterAlloc(r, List.of(), 0);
        assertFalse(lmcache.holdsLookupLocks("R"));
    }

    /** #44100: ended before allocation, the cleanup only pops the tracker; the locks wait for their TTL. */
    @Test
    void anEarlyEndLeaksTheLocksBefore44101() {
        LmCacheConnector lmcache = lookedUp(FixSet.upstreamMain());
        lmcache.requestFinished(r, List.of());
        assertEquals(List.of(ViolationKind.LOOKUP_LOCKS_LEAKED), log.all().stream().map(Violation::kind).toList());
        assertFalse(lmcache.holdsLookupLocks("R"), "the tracker is gone: nothing will release them");
        lmcache.requestFinished(r, List.of());
        assertEquals(1, log.all().size(), "recorded once");
    }

    @Test
    void with44101TheCleanupFreesThem() {
        LmCacheConnector lmcache = lookedUp(FixSet.upstreamMain().with(Fix.FREE_LOOKUP_LOCKS_ON_CLEANUP));
        lmcache.requestFinished(r, List.of());
        assertFalse(lmcache.holdsLookupLocks("R"));
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void noHitTakesNoLock() {
        LmCacheConnector lmcache = new LmCacheConnector("LMCacheMPConnector", kv, false, FixSet.upstreamMain(), Configuration.DEFAULT);
        assertFalse(lmcache.getNumNewMatchedTokens(r, 0).loadKvAsync());
        assertFalse(lmcache.holdsLookupLocks("R"));
        lmcache.requestFinished(r, List.of());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void badLookupsAreRefusedAndTakeNoLock() {
        LmCacheConnector lmcache = new LmCacheConnector("LMCacheMPConnector", kv, false, FixSet.upstreamMain(), Configuration.DEFAULT);
        lmcache.cachedPrefix("R", 4);
        assertThrows(IllegalArgumentException.class, () -> lmcache.getNumNewMatchedTokens(r, -1));
        assertThrows(NullPointerException.class, () -> lmcache.getNumNewMatchedTokens(null, 0));
        assertFalse(lmcache.holdsLookupLocks("R"));
        assertThrows(NullPointerException.class, () -> lmcache.requestFinished(null, List.of()));
        assertTrue(log.isEmpty(), log.toString());
    }
}
