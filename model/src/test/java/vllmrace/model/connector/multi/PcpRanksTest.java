package vllmrace.model.connector.multi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.KvRole;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;

/**
 * Replicated prefill context parallelism (#52779, #53903): one worker per PCP rank behind the aggregator, each binding the
 * same MultiConnector metadata; NIXL serves reads from rank 0 only; the offloader stores on every rank.
 */
class PcpRanksTest {
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
    private final Request r = Request.finished("R", 1, 3, 1, RequestStatus.FINISHED_LENGTH_CAPPED);

    private MultiConnector finishedOnTwoRanks(FixSet fixes, NixlPullProducer nixl, OffloadingConnector offloading) {
        MultiConnector multi = new MultiConnector(fixes, KvRole.KV_BOTH, List.of(nixl, offloading), 2);
        kv.allocateSlots("R", 4);
        assertTrue(multi.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks());
        return multi;
    }

    /** Before #53903 rank 1 has one report of R (the offloader's) and the extra-save count absorbs it. */
    @Test
    void beforeTheFixRankOnesOnlyReportIsAbsorbed() {
        NixlPullProducer nixl = new NixlPullProducer("NixlConnector", kv, FixSet.none(), 8, false, 2);
        OffloadingConnector offloading = new OffloadingConnector("OffloadingConnector", kv, 2);
        MultiConnector multi = finishedOnTwoRanks(FixSet.none(), nixl, offloading);
        assertNull(multi.getFinishedCount(), "the offloader's None wins over NIXL's TP x PP");
        assertEquals(1, nixl.getFinishedCount());
        KvOutputAggregator aggregator = new KvOutputAggregator(multi.rankWorkers(), multi.getFinishedCount(), log, null);
        assertEquals(2, multi.pcpSize());
        assertEquals(2, multi.rankWorkers().size());
        assertEquals(Set.of(), aggregator.getFinished(Set.of("R")).finishedSending(), "nothing completed yet");
        assertEquals(Map.of("R", 1), multi.workerExtraAsyncSaves(0), "every rank bound the step's metadata");
        assertEquals(Map.of("R", 1), multi.workerExtraAsyncSaves(1));
        nixl.remoteRead("R");
        offloading.completeStore(0, "R");
        assertEquals(Set.of(), aggregator.getFinished(Set.of()).finishedSending(), "rank 0 reports (1 of 2)");
        assertEquals(Map.of(), multi.workerExtraAsyncSaves(0), "rank 0's count absorbed NIXL's report");
        assertEquals(Map.of("R", 1), multi.workerExtraAsyncSaves(1), "rank 1's is its own");
        offloading.completeStore(1, "R");
        assertEquals(Set.of(), aggregator.getFinished(Set.of()).finishedSending(), "rank 1 does not report");
        assertEquals(Map.of(), multi.workerExtraAsyncSaves(1), "rank 1's count was drained by the offloader's report");
        assertEquals(Set.of(), aggregator.getFinished(Set.of()).finishedSending());
        assertTrue(nixl.isIdle() && offloading.isIdle(), "nothing is left to report R");
    }

    /** With #53903 rank 1's NIXL reports R when the metadata arrives: each rank forwards R once, the count completes. */
    @Test
    void withTheFixEveryRankReportsOnce() {
        FixSet fixes = FixSet.of(java.util.List.of(Fix.PCP_REPLICA_REPORTS_SENT));
        NixlPullProducer nixl = new NixlPullProducer("NixlConnector", kv, fixes, 8, false, 2);
        OffloadingConnector offloading = new OffloadingConnector("OffloadingConnector", kv, 2);
        MultiConnector multi = finishedOnTwoRanks(fixes, nixl, offloading);
        assertNull(multi.getFinishedCount());
        assertNull(nixl.getFinishedCount());
        KvOutputAggregator aggregator = new KvOutputAggregator(multi.rankWorkers(), multi.getFinishedCount(), log, null);
        assertEquals(Set.of(), aggregator.getFinished(Set.of("R")).finishedSending());
        offloading.completeStore(1, "R");
        nixl.remoteRead("R");
        offloading.completeStore(0, "R");
        assertEquals(Set.of("R"), aggregator.getFinished(Set.of()).finishedSending());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void badRanksAndStoresAreRefusedAndChangeNothing() {
        NixlPullProducer nixl = new NixlPullProducer("NixlConnector", kv, FixSet.none(), 8, false, 2);
        OffloadingConnector offloading = new OffloadingConnector("OffloadingConnector", kv, 2);
        MultiConnector multi = finishedOnTwoRanks(FixSet.none(), nixl, offloading);
        String before = nixl.progressSignature() + offloading.progressSignature() + multi.workerExtraAsyncSaves(1);
        assertThrows(IllegalArgumentException.class, () -> multi.getFinishedOnRank(2, Set.of()));
        assertThrows(IllegalArgumentException.class, () -> multi.getFinishedOnRank(-1, Set.of()));
        assertThrows(IllegalArgumentException.class, () -> multi.workerExtraAsyncSaves(2));
        assertThrows(IllegalArgumentException.class, () -> nixl.getFinishedOnRank(2, Set.of()));
        assertThrows(IllegalArgumentException.class, () -> offloading.getFinishedOnRank(2, Set.of()));
        assertThrows(IllegalArgumentException.class, () -> offloading.completeStore(2, "R"));
        assertThrows(UnknownTransferException.class, () -> offloading.completeStore(0, "X"), "no store of X");
        assertThrows(IllegalStateException.class, () -> offloading.requestFinished(r, kv.getBlockIds("R")), "R's store is unreported");
        assertEquals(before, nixl.progressSignature() + offloading.progressSignature() + multi.workerExtraAsyncSaves(1));
        offloading.completeStore(0, "R");
        assertThrows(UnknownTransferException.class, () -> offloading.completeStore(0, "R"), "completed already");
        assertThrows(IllegalArgumentException.class, () -> new MultiConnector(FixSet.none(), KvRole.KV_BOTH, List.of(offloading), 0));
        assertThrows(IllegalArgumentException.class, () -> new OffloadingConnector("O", kv, 0));
        assertThrows(IllegalArgumentException.class, () -> new NixlPullProducer("N", kv, FixSet.none(), 8, false, 0));
        assertTrue(log.isEmpty(), log.toString());
    }

    /** A request without do_remote_decode is freed at once by NIXL: only the offloader saves it, each rank reports it once. */
    @Test
    void aLocallyDecodedRequestIsCountedOnEveryRankWithoutTheFix() {
        NixlPullProducer nixl = new NixlPullProducer("NixlConnector", kv, FixSet.none(), 8, false, 2);
        OffloadingConnector offloading = new OffloadingConnector("OffloadingConnector", kv, 2);
        assertThrows(NullPointerException.class, () -> nixl.decodeLocally(null));
        nixl.decodeLocally("R");
        MultiConnector multi = finishedOnTwoRanks(FixSet.none(), nixl, offloading);
        assertTrue(nixl.isIdle(), "not leased");
        assertEquals(Map.of(), multi.workerExtraAsyncSaves(1));
        KvOutputAggregator aggregator = new KvOutputAggregator(multi.rankWorkers(), multi.getFinishedCount(), log, null);
        offloading.finishInFlightTransfers();
        assertEquals(Set.of("R"), aggregator.getFinished(Set.of("R")).finishedSending());
        assertTrue(log.isEmpty(), log.toString());
    }

    /** A child that models no worker beyond rank 0 refuses a higher rank; two children with the same count keep it. */
    @Test
    void aChildWithoutReplicasRefusesRankOneAndCommonCountsAreKept() {
        LmCacheConnector lmcache = LmCacheConnector.outOfTree("LMCacheMPConnector", kv, true);
        assertThrows(UnsupportedOperationException.class, () -> lmcache.getFinishedOnRank(1, Set.of()));
        KvConnectorOutput rank0 = lmcache.getFinishedOnRank(0, Set.of());
        assertEquals(Set.of(), rank0.finishedSending());
        NixlPullProducer a = new NixlPullProducer("A", kv, FixSet.none(), 8, false, 2);
        NixlPullProducer b = new NixlPullProducer("B", kv, FixSet.none(), 8, false, 2);
        assertEquals(1, new MultiConnector(FixSet.none(), KvRole.KV_BOTH, List.of(a, b), 2).getFinishedCount());
    }
}
