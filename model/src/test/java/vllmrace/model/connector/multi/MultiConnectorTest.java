package vllmrace.model.connector.multi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.KvConnectorWorker;
import vllmrace.model.connector.MatchedTokens;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;

/** MultiConnector, its children and KvOutputAggregator, operation by operation (lifecycle §3). */
class MultiConnectorTest {
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(4, log), 4, log);
    private final Request r = new Request("R", 1, 4, 1);

    private List<Integer> allocate() {
        kv.allocateSlots("R", 4);
        return kv.getBlockIds("R");
    }

    @Test
    void sendsAreDedupedByCountAndReportedAfterTheLastSave() {
        LmCacheConnector a = LmCacheConnector.outOfTree("A", kv, true);
        LmCacheConnector b = LmCacheConnector.outOfTree("B", kv, true);
        MultiConnector multi = new MultiConnector(FixSet.all(), List.of(a, b));
        assertTrue(multi.requestFinished(r, allocate()).delayFreeBlocks());
        assertEquals(Set.of(), multi.getFinished(Set.of("R")).finishedSending());
        assertEquals(Map.of("R", 1), multi.workerExtraAsyncSaves());
        b.completeSave("R");
        assertEquals(Set.of(), multi.getFinished(Set.of()).finishedSending(), "the first report is absorbed");
        a.completeSave("R");
        assertEquals(Set.of("R"), multi.getFinished(Set.of()).finishedSending());
        assertEquals(Map.of(), multi.workerExtraAsyncSaves(), "CN3: the count drained");
        assertEquals(1, a.requestFinishedCalls("R"));
        assertEquals(1, b.requestFinishedCalls("R"));
    }

    /** Three saving children: the count starts at 2 and goes down one per absorbed report; the third reports. */
    @Test
    void threeSavesAreReportedOnceAfterTheLast() {
        LmCacheConnector a = LmCacheConnector.outOfTree("A", kv, true);
        LmCacheConnector b = LmCacheConnector.outOfTree("B", kv, true);
        LmCacheConnector c = LmCacheConnector.outOfTree("C", kv, true);
        MultiConnector multi = new MultiConnector(FixSet.all(), List.of(a, b, c));
        assertTrue(multi.requestFinished(r, allocate()).delayFreeBlocks());
        assertEquals(Set.of(), multi.getFinished(Set.of("R")).finishedSending());
        assertEquals(Map.of("R", 2), multi.workerExtraAsyncSaves());
        c.completeSave("R");
        assertEquals(Set.of(), multi.getFinished(Set.of()).finishedSending(), "absorbed");
        assertEquals(Map.of("R", 1), multi.workerExtraAsyncSaves());
        b.completeSave("R");
        assertEquals(Set.of(), multi.getFinished(Set.of()).finishedSending(), "absorbed");
        assertEquals(Map.of(), multi.workerExtraAsyncSaves());
        a.completeSave("R");
        assertEquals(Set.of("R"), multi.getFinished(Set.of()).finishedSending());
    }

    @Test
    void aSaveIsReportedOnlyAfterItsIdWasSeenInFinishedReqIds() {
        LmCacheConnector a = LmCacheConnector.outOfTree("A", kv, true);
        MultiConnector multi = new MultiConnector(FixSet.all(), List.of(a));
        multi.requestFinished(r, allocate());
        a.completeSave("R");
        assertEquals(Set.of(), multi.getFinished(Set.of()).finishedSending(), "CN2");
        assertEquals(Set.of("R"), multi.getFinished(Set.of("R")).finishedSending());
    }

    private MultiConnector twoLoaders(FixSet fixes, NixlDecodeConnector[] nixl, LmCacheConnector[] lm) {
        nixl[0] = new NixlDecodeConnector("NIXL", kv, fixes);
        lm[0] = LmCacheConnector.outOfTree("LMCache", kv, false);
        nixl[0].remotePrefill("R", 4);
        lm[0].cachedPrefix("R", 4);
        MultiConnector multi = new MultiConnector(fixes, List.of(nixl[0], lm[0]));
        assertEquals(new MatchedTokens(4, true), multi.getNumNewMatchedTokens(r, 0));
        assertEquals(0, multi.chosenConnector("R"), "the first child with tokens is chosen");
        multi.updateStateAfterAlloc(r, allocate(), 4);
        assertTrue(nixl[0].isPullInFlight("R"));
        assertTrue(lm[0].hasUnreportedLoad("R"), "start_load_kv is broadcast: the other child loads too");
        return multi;
    }

    @Test
    void theFirstChildWithTokensIsChosenNotTheFirstChild() {
        LmCacheConnector none = LmCacheConnector.outOfTree("none", kv, false);
        LmCacheConnector some = LmCacheConnector.outOfTree("some", kv, false);
        some.cachedPrefix("R", 4);
        MultiConnector multi = new MultiConnector(FixSet.all(), List.of(none, some));
        assertEquals(new MatchedTokens(4, true), multi.getNumNewMatchedTokens(r, 0));
        assertEquals(1, multi.chosenConnector("R"));
        multi.updateStateAfterAlloc(r, allocate(), 0); // 0 external tokens is a valid call (nothing to load remotely)
        assertTrue(some.hasUnreportedLoad("R"));
    }

    @Test
    void aNixlPullIsPendingUntilReportedAndCountsItsRequestFinishedCalls() {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, FixSet.all());
        nixl.remotePrefill("R", 4);
        assertTrue(nixl.isIdle());
        nixl.updateStateAfterAlloc(r, allocate(), 4);
        assertFalse(nixl.isIdle());
        assertTrue(nixl.hasPendingTransfer("R"));
        assertEquals(kv.getBlockIds("R"), nixl.inFlightLoadTargets().stream().flatMap(t -> t.blocks().stream()).map(b -> b.blockId()).toList());
        nixl.requestFinished(r, kv.getBlockIds("R"));
        assertEquals(1, nixl.requestFinishedCalls("R"));
        assertEquals(1, nixl.finishInFlightTransfers());
        assertEquals(List.of(), nixl.inFlightLoadTargets(), "landed, not yet reported");
        assertTrue(nixl.hasPendingTransfer("R"));
        assertEquals(Set.of("R"), nixl.getFinished(Set.of()).finishedRecving());
        assertFalse(nixl.hasPendingTransfer("R"));
        assertTrue(nixl.isIdle());
        assertEquals(0, nixl.finishInFlightTransfers());
    }

    @Test
    void aNixlChildNotChosenSendsAnEmptyReceiveAndPullsNothing() {
        LmCacheConnector lm = LmCacheConnector.outOfTree("LMCache", kv, false);
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, FixSet.all());
        lm.cachedPrefix("R", 4);
        nixl.remotePrefill("R", 4);
        MultiConnector multi = new MultiConnector(FixSet.all(), List.of(lm, nixl));
        assertEquals(new MatchedTokens(4, true), multi.getNumNewMatchedTokens(r, 0));
        assertEquals(0, multi.chosenConnector("R"), "LMCache comes first and has tokens");
        multi.updateStateAfterAlloc(r, allocate(), 4);
        assertTrue(lm.hasUnreportedLoad("R"));
        assertTrue(nixl.isIdle(), "offered 0 tokens: no pull");
        assertTrue(nixl.notifiedWithoutPull("R"), "the prefill side is told to free its blocks");
        assertFalse(nixl.notifiedWithoutPull("never-offered"), "a request it never heard of got no notification");
        assertEquals(List.of(), nixl.inFlightLoadTargets());
        lm.completeLoad("R");
        assertEquals(Set.of("R"), multi.getFinished(Set.of()).finishedRecving(), "the chosen child's recv only");
        assertEquals(KvConnectorOutput.EMPTY, nixl.getFinished(Set.of()));
        assertFalse(nixl.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "decode side: (False, None)");
    }

    @Test
    void aNixlRequestFinishedBeforeAllocationSendsTheEmptyReceiveThen() {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, FixSet.all());
        nixl.remotePrefill("R", 4);
        assertFalse(nixl.requestFinished(r, List.of()).delayFreeBlocks());
        assertTrue(nixl.notifiedWithoutPull("R"));
        nixl.updateStateAfterAlloc(r, allocate(), 4); // do_remote_prefill was cleared: one transfer per request
        assertTrue(nixl.isIdle());
        assertThrows(IllegalArgumentException.class, () -> nixl.updateStateAfterAlloc(r, List.of(), -1));
    }

    @Test
    void recvsAreAPlainUnionUpstream() {
        NixlDecodeConnector[] nixl = new NixlDecodeConnector[1];
        LmCacheConnector[] lm = new LmCacheConnector[1];
        MultiConnector multi = twoLoaders(FixSet.all().without(Fix.MULTI_CONNECTOR_LOAD_DEDUP), nixl, lm);
        lm[0].completeLoad("R");
        assertEquals(Set.of("R"), multi.getFinished(Set.of()).finishedRecving());
        nixl[0].completePull("R");
        assertEquals(Set.of("R"), multi.getFinished(Set.of()).finishedRecving(), "seed 003: reported a second time");
    }

    @Test
    void loadDedupReportsTheRecvOnceAfterTheLastLoad() {
        NixlDecodeConnector[] nixl = new NixlDecodeConnector[1];
        LmCacheConnector[] lm = new LmCacheConnector[1];
        MultiConnector multi = twoLoaders(FixSet.all(), nixl, lm);
        assertTrue(multi.hasPendingTransfer("R"));
        assertEquals(2, multi.inFlightLoadTargets().size(), "both children load into R's blocks");
        multi.bindConnectorMetadata(multi.buildConnectorMeta()); // the extra load count moves to the worker side
        assertEquals(Map.of("R", 1), multi.workerExtraAsyncLoads());
        lm[0].completeLoad("R");
        assertEquals(Set.of(), multi.getFinished(Set.of()).finishedRecving());
        nixl[0].completePull("R");
        assertEquals(Set.of("R"), multi.getFinished(Set.of()).finishedRecving());
        assertEquals(Map.of(), multi.workerExtraAsyncLoads());
        assertFalse(multi.hasPendingTransfer("R"));
    }

    @Test
    void aFailedLoadOfEitherChildIsReportedOnceWithItsBlocksInvalid() {
        NixlDecodeConnector[] nixl = new NixlDecodeConnector[1];
        LmCacheConnector[] lm = new LmCacheConnector[1];
        MultiConnector multi = twoLoaders(FixSet.all(), nixl, lm);
        List<Integer> blocks = kv.getBlockIds("R");
        lm[0].failLoad("R");
        assertThrows(UnknownTransferException.class, () -> lm[0].completeLoad("R"), "a failed load is done");
        KvConnectorOutput first = multi.getFinished(Set.of());
        assertEquals(Set.of(), first.finishedRecving(), "load dedup: the NIXL pull is still in flight");
        assertEquals(Set.copyOf(blocks), first.invalidBlockIds(), "the failure is reported at once");
        nixl[0].failPull("R");
        assertEquals(List.of(), multi.inFlightLoadTargets());
        KvConnectorOutput second = multi.getFinished(Set.of());
        assertEquals(Set.of("R"), second.finishedRecving(), "even a failed load must be reported");
        assertEquals(Set.copyOf(blocks), second.invalidBlockIds());
        assertEquals(KvConnectorOutput.EMPTY, multi.getFinished(Set.of()), "reported once");
        assertThrows(UnknownTransferException.class, () -> nixl[0].failPull("R"));
        assertTrue(log.isEmpty(), "a failed load writes nothing");
    }

    /**
     * Found by the connector fuzzer: the in-tree LMCache child not chosen keeps its hit, and a preempted request (re-admitted
     * with 0 computed tokens) got it loaded then, a second finished_recving for one request. Upstream's LMCache MP returns
     * 0 for a preempted request.
     */
    @Test
    void lmcacheOffersNothingToAPreemptedRequest() {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, FixSet.all());
        LmCacheConnector lm = new LmCacheConnector("LMCache", kv, false, FixSet.all(), vllmrace.model.deploy.Configuration.DEFAULT);
        nixl.remotePrefill("R", 4);
        lm.cachedPrefix("R", 4);
        MultiConnector multi = new MultiConnector(FixSet.all(), List.of(nixl, lm));
        assertEquals(new MatchedTokens(4, true), multi.getNumNewMatchedTokens(r, 0));
        multi.updateStateAfterAlloc(r, allocate(), 4);
        assertFalse(lm.hasUnreportedLoad("R"), "#47505: not chosen, no load");
        assertEquals(new MatchedTokens(4, true), lm.getNumNewMatchedTokens(r, 0), "the hit is still there");
        vllmrace.model.sched.RequestSeams.setStatus(r, vllmrace.model.sched.RequestStatus.PREEMPTED);
        assertEquals(MatchedTokens.NONE, lm.getNumNewMatchedTokens(r, 0));
        assertEquals(MatchedTokens.NONE, multi.getNumNewMatchedTokens(r, 0), "recomputed locally, not loaded again");
    }

    @Test
    void aggregatorCountsEachIdDownPerWorker() {
        KvConnectorOutput recvR = new KvConnectorOutput(Set.of(), Set.of("R"), Set.of());
        KvConnectorWorker w = ids -> KvConnectorOutput.EMPTY;
        KvOutputAggregator agg = new KvOutputAggregator(List.of(w, w), null, log, null);
        assertEquals(Set.of(), agg.aggregate(List.of(recvR, KvConnectorOutput.EMPTY)).finishedRecving());
        assertEquals(Set.of("R"), agg.pendingRecvs());
        assertEquals(Set.of("R"), agg.aggregate(List.of(KvConnectorOutput.EMPTY, recvR)).finishedRecving());
        assertEquals(Set.of(), agg.pendingRecvs());
    }

    @Test
    void aggregatorRecordsASecondRecvOfOneId() {
        KvConnectorOutput recvR = new KvConnectorOutput(Set.of(), Set.of("R"), Set.of());
        KvOutputAggregator agg = new KvOutputAggregator(List.of(ids -> KvConnectorOutput.EMPTY), null, log, id -> null);
        agg.aggregate(List.of(recvR));
        agg.aggregate(List.of(recvR));
        assertTrue(log.has(ViolationKind.DUPLICATE_TRANSFER_EVENT));
    }

    /** CN1 counts per request: a freed request's event under an id does not make the next request's one event a second. */
    @Test
    void aggregatorCountsTerminalEventsPerRequestNotPerId() {
        KvConnectorOutput sendR = new KvConnectorOutput(Set.of("R"), Set.of(), Set.of());
        java.util.Map<String, Request> named = new java.util.HashMap<>();
        KvOutputAggregator agg = new KvOutputAggregator(List.of(ids -> KvConnectorOutput.EMPTY), null, log, named::get);
        named.put("R", new Request("R", 1, 4, 1));
        agg.aggregate(List.of(sendR));
        named.put("R", new Request("R", 2, 4, 1)); // the id served again
        agg.aggregate(List.of(sendR));
        assertTrue(log.isEmpty(), log::toString);
        agg.aggregate(List.of(sendR));
        assertTrue(log.has(ViolationKind.DUPLICATE_TRANSFER_EVENT), "the second request's second event still counts");
    }

    // ---- bad input: a specific exception with state unchanged, or a documented no-op ----

    @Test
    void completingAnUnknownOrAlreadyReportedTransferThrowsAndChangesNothing() {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, FixSet.all());
        LmCacheConnector lm = LmCacheConnector.outOfTree("LM", kv, true);
        assertThrows(UnknownTransferException.class, () -> nixl.completePull("nobody"));
        assertThrows(UnknownTransferException.class, () -> lm.completeLoad("nobody"));
        assertThrows(UnknownTransferException.class, () -> lm.completeSave("nobody"));
        lm.cachedPrefix("R", 4);
        lm.updateStateAfterAlloc(r, allocate(), 4);
        lm.completeLoad("R");
        assertThrows(UnknownTransferException.class, () -> lm.completeLoad("R"), "a duplicate report");
        assertEquals(Set.of("R"), lm.getFinished(Set.of()).finishedRecving(), "still reported exactly once");
        assertEquals(Set.of(), lm.getFinished(Set.of()).finishedRecving());
        assertTrue(log.isEmpty());
    }

    @Test
    void negativeCountsAreRejected() {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, FixSet.all());
        LmCacheConnector lm = LmCacheConnector.outOfTree("LM", kv, true);
        MultiConnector multi = new MultiConnector(FixSet.all(), List.of(nixl, lm));
        assertThrows(IllegalArgumentException.class, () -> nixl.remotePrefill("R", 0));
        assertThrows(IllegalArgumentException.class, () -> lm.cachedPrefix("R", -1));
        assertThrows(IllegalArgumentException.class, () -> multi.getNumNewMatchedTokens(r, -1));
        assertThrows(IllegalArgumentException.class, () -> multi.updateStateAfterAlloc(r, List.of(), -4));
        assertThrows(IllegalArgumentException.class, () -> new ConnectorMetadata(Map.of("R", 0), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> new ConnectorMetadata(Map.of(), Map.of("R", -1)));
        assertThrows(IllegalArgumentException.class, () -> new KvOutputAggregator(List.of(ids -> KvConnectorOutput.EMPTY), 0, log, null));
        assertThrows(IllegalArgumentException.class, () -> new KvOutputAggregator(List.of(), null, log, null));
        assertEquals(MatchedTokens.NONE, multi.getNumNewMatchedTokens(r, 0), "nothing was registered");
        assertEquals(Map.of(), multi.workerExtraAsyncSaves());
    }

    @Test
    void structuralCallerErrorsAreRejected() {
        LmCacheConnector lm = LmCacheConnector.outOfTree("LM", kv, true);
        assertThrows(IllegalArgumentException.class, () -> new MultiConnector(FixSet.all(), List.of()));
        assertThrows(IllegalArgumentException.class, () -> new MultiConnector(FixSet.all(), List.of(lm, lm)));
        MultiConnector multi = new MultiConnector(FixSet.all(), List.of(lm));
        assertThrows(NullPointerException.class, () -> multi.requestFinished(null, List.of()));
        assertThrows(NullPointerException.class, () -> multi.getFinished(null));
        KvOutputAggregator agg = new KvOutputAggregator(List.of(multi), null, log, null);
        assertThrows(IllegalArgumentException.class, () -> agg.aggregate(List.of(KvConnectorOutput.EMPTY, KvConnectorOutput.EMPTY)));
        assertEquals(0, lm.requestFinishedCalls("R"));
    }

    @Test
    void finishedReqIdsNamingUnknownRequestsAreANoOp() {
        LmCacheConnector lm = LmCacheConnector.outOfTree("LM", kv, true);
        MultiConnector multi = new MultiConnector(FixSet.all(), List.of(lm));
        assertEquals(KvConnectorOutput.EMPTY, multi.getFinished(Set.of("never-added")));
        assertFalse(multi.hasPendingTransfer("never-added"));
    }

    @Test
    void nixlPinsANormallyFinishedRequestOnlyWithTheFix() {
        NixlDecodeConnector upstream = new NixlDecodeConnector("NIXL", kv, FixSet.all().without(Fix.NIXL_PIN_PULL_BLOCKS));
        upstream.remotePrefill("R", 4);
        upstream.updateStateAfterAlloc(r, allocate(), 4);
        assertFalse(upstream.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "decode side: (False, None)");
    }

    /** #46240: a NIXL pull of R in flight, an offloading LMCache child; R is aborted (request_finished) mid-load. */
    private static MultiConnector pullAndOffload(FixSet fixes, KvCacheManager kv, Request r, LmCacheConnector[] lm) {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, fixes);
        lm[0] = LmCacheConnector.outOfTree("LMCache offload", kv, true);
        nixl.remotePrefill("R", 4);
        MultiConnector multi = new MultiConnector(fixes, List.of(nixl, lm[0]));
        multi.getNumNewMatchedTokens(r, 0);
        kv.allocateSlots("R", 4);
        multi.updateStateAfterAlloc(r, kv.getBlockIds("R"), 4);
        return multi;
    }

    @Test
    void upstreamStartsASaveNextToAnInFlightLoad() {
        LmCacheConnector[] lm = new LmCacheConnector[1];
        MultiConnector multi = pullAndOffload(FixSet.all().without(Fix.NO_SAVE_WHILE_LOADING), kv, r, lm);
        assertTrue(multi.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "the offload child saves: a second terminal event will come");
        assertTrue(lm[0].hasPendingTransfer("R"));
    }

    @Test
    void noSaveWhileLoadingGivesTheOtherChildrenNoBlocksUntilTheRecvIsSeen() {
        LmCacheConnector[] lm = new LmCacheConnector[1];
        MultiConnector multi = pullAndOffload(FixSet.all(), kv, r, lm);
        assertFalse(multi.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "only the load's finished_recving will end R");
        assertFalse(lm[0].hasPendingTransfer("R"));
        assertEquals(1, lm[0].requestFinishedCalls("R"), "request_finished is still called on every child (#46304 review)");
    }

    @Test
    void afterTheRecvWasSeenTheOffloadSavesAsUsual() {
        LmCacheConnector[] lm = new LmCacheConnector[1];
        MultiConnector multi = pullAndOffload(FixSet.all(), kv, r, lm);
        multi.updateConnectorOutput(new KvConnectorOutput(Set.of(), Set.of("R"), Set.of()));
        assertTrue(multi.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks());
        assertTrue(lm[0].hasPendingTransfer("R"));
    }

    /** A pinned pull (seed 003 (2)) is reported once as finished_sending, after CN2, and then never again. */
    @Test
    void aPinnedPullIsReportedAsASendOnce() {
        NixlDecodeConnector nixl = new NixlDecodeConnector("NIXL", kv, FixSet.all());
        nixl.remotePrefill("R", 4);
        nixl.updateStateAfterAlloc(r, allocate(), 4);
        assertFalse(nixl.notifiedWithoutPull("R"), "pulled, not notified");
        vllmrace.model.sched.RequestSeams.setStatus(r, vllmrace.model.sched.RequestStatus.FINISHED_STOPPED);
        assertTrue(nixl.requestFinished(r, kv.getBlockIds("R")).delayFreeBlocks(), "pinned: the free waits for the send");
        nixl.completePull("R");
        assertEquals(Set.of("R"), nixl.getFinished(Set.of("R")).finishedSending());
        assertEquals(KvConnectorOutput.EMPTY, nixl.getFinished(Set.of("R")), "reported once");
        assertTrue(nixl.isIdle());
    }
}
