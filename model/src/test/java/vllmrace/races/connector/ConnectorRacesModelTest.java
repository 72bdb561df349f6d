package vllmrace.races.connector;

import vllmrace.races.AllInterleavings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Variant;

/** Every interleaving of the connector races' actors, run directly on the model (no harness). */
class ConnectorRacesModelTest {

    private static Map<RaceOutcome, Integer> explore(Race race, FixSet fixes) {
        return AllInterleavings.outcomes(() -> race.scenario(fixes));
    }

    /**
     * The connector races' decode instance as upstream would configure it: a kv_both MultiConnector, so with the
     * AsyncScheduler's two batches #45357 defers block frees, and its kv_both children require KV delivery (#50297); with
     * the sync Scheduler nothing is deferred (one batch in flight).
     */
    @Test
    void theRigsMultiConnectorIsAConsumerThatRequiresDelivery() {
        vllmrace.model.fix.FixSet main = vllmrace.model.deploy.Profile.MAIN.fixes();
        ConnectorRig async = new ConnectorRig(main, 2, kv -> java.util.List.of(
                new vllmrace.model.connector.multi.NixlDecodeConnector("NixlConnector", kv, main)));
        assertTrue(async.scheduler().defersBlockFrees());
        assertTrue(async.scheduler().requiresKvDelivery());
        ConnectorRig sync = new ConnectorRig(main, vllmrace.model.deploy.Profile.MAIN_SYNC_SCHEDULING.configuration(), 2,
                kv -> java.util.List.of(new vllmrace.model.connector.multi.NixlDecodeConnector("NixlConnector", kv, main)));
        assertFalse(sync.scheduler().defersBlockFrees());
        assertEquals(1, sync.scheduler().maxConcurrentBatches());
    }

    /**
     * The connector fuzzer's sequence: two remote prefills that together outgrow the pool, the second with an LMCache hit
     * the in-tree child was not chosen for. The preempted request is recomputed; its one load is reported once.
     */
    @Test
    void aPreemptedRequestIsNotReloadedByTheChildNotChosen() {
        FixSet all = FixSet.all();
        vllmrace.model.deploy.Configuration sync = vllmrace.model.deploy.Configuration.of(vllmrace.model.deploy.ConfigSwitch.SYNC_SCHEDULING);
        vllmrace.model.connector.multi.NixlDecodeConnector[] n = new vllmrace.model.connector.multi.NixlDecodeConnector[1];
        vllmrace.model.connector.multi.LmCacheConnector[] l = new vllmrace.model.connector.multi.LmCacheConnector[1];
        ConnectorRig rig = new ConnectorRig(all, sync, 7, kv -> {
            n[0] = new vllmrace.model.connector.multi.NixlDecodeConnector("NixlConnector", kv, all);
            l[0] = new vllmrace.model.connector.multi.LmCacheConnector("LMCacheMPConnector", kv, false, all, sync);
            return java.util.List.of(n[0], l[0]);
        });
        n[0].remotePrefill("c-1", 16);
        rig.sendAdd("c-1", 16, 4, 4);
        n[0].remotePrefill("c-2", 8);
        l[0].cachedPrefix("c-2", 8);
        rig.sendAdd("c-2", 8, 4, 4);
        rig.admit("c-1", "c-2");
        for (int i = 0; i < 40 && !(rig.request("c-1").isFinished() && rig.request("c-2").isFinished()); i++) {
            n[0].finishInFlightTransfers();
            l[0].finishInFlightTransfers();
            rig.runBusyLoopOnce();
        }
        assertTrue(rig.request("c-1").numPreemptions() + rig.request("c-2").numPreemptions() > 0, "the pool is short: a preemption");
        rig.runToQuiescence();
        assertTrue(rig.violations().isEmpty(), rig.violations().all().toString());
        assertTrue(rig.allFreed());
    }

    @Test
    void extraAsyncSavesDedupIsCleanInEveryInterleaving() {
        Map<RaceOutcome, Integer> seen = explore(Race.ExtraAsyncSavesDedup, Race.ExtraAsyncSavesDedup.fixes(Variant.FIXED));
        assertEquals(Set.of(ExtraAsyncSavesDedupScenario.Outcome.FREED_AFTER_LAST_SAVE), seen.keySet(), seen.toString());
    }

    @Test
    void lateLoadCompletionUnionReportedKillsTheEngineAndFixedIsClean() {
        Map<RaceOutcome, Integer> reported = explore(Race.LateLoadCompletionUnion, Race.LateLoadCompletionUnion.fixes(Variant.REPORTED));
        assertTrue(reported.containsKey(LateLoadCompletionUnionScenario.Outcome.ENGINE_DEAD), reported.toString());
        assertTrue(reported.containsKey(LateLoadCompletionUnionScenario.Outcome.COMPLETED), reported.toString());
        Map<RaceOutcome, Integer> fixed = explore(Race.LateLoadCompletionUnion, Race.LateLoadCompletionUnion.fixes(Variant.FIXED));
        assertEquals(Set.of(LateLoadCompletionUnionScenario.Outcome.COMPLETED), fixed.keySet(), fixed.toString());
    }

    @Test
    void lateLoadCompletionUnionIsClosedByEachSufficientDirectionAlone() {
        for (Fix direction : Race.LateLoadCompletionUnion.closedBy()) {
            FixSet fixes = Race.LateLoadCompletionUnion.fixes(Variant.REPORTED).with(direction);
            Map<RaceOutcome, Integer> seen = explore(Race.LateLoadCompletionUnion, fixes);
            assertTrue(!seen.containsKey(LateLoadCompletionUnionScenario.Outcome.ENGINE_DEAD), direction + ": " + seen);
        }
    }

    @Test
    void pullIntoFreedBlocksReportedWritesAFreedBlockAndFixedIsClean() {
        Map<RaceOutcome, Integer> reported = explore(Race.PullIntoFreedBlocks, Race.PullIntoFreedBlocks.fixes(Variant.REPORTED));
        assertTrue(reported.containsKey(PullIntoFreedBlocksScenario.Outcome.PULL_WROTE_FREED_BLOCK), reported.toString());
        assertTrue(!reported.containsKey(PullIntoFreedBlocksScenario.Outcome.UNEXPECTED), reported.toString());
        Map<RaceOutcome, Integer> fixed = explore(Race.PullIntoFreedBlocks, Race.PullIntoFreedBlocks.fixes(Variant.FIXED));
        assertEquals(Set.of(PullIntoFreedBlocksScenario.Outcome.NO_BAD_WRITE), fixed.keySet(), fixed.toString());
    }

    @Test
    void pinningAloneClosesPullIntoFreedBlocks() {
        FixSet fixes = Race.PullIntoFreedBlocks.fixes(Variant.REPORTED).with(Fix.NIXL_PIN_PULL_BLOCKS);
        Map<RaceOutcome, Integer> seen = explore(Race.PullIntoFreedBlocks, fixes);
        assertEquals(Set.of(PullIntoFreedBlocksScenario.Outcome.NO_BAD_WRITE), seen.keySet(), seen.toString());
    }

    @Test
    void recvAndSendForAbortedLoadReportedKillsTheEngineAndFixedIsClean() {
        Map<RaceOutcome, Integer> reported = explore(Race.RecvAndSendForAbortedLoad, Race.RecvAndSendForAbortedLoad.fixes(Variant.REPORTED));
        // every other fix ON includes seed 003 (3): the late send is skipped, the engine lives, but the save read a freed block
        assertTrue(reported.containsKey(RecvAndSendForAbortedLoadScenario.Outcome.SAVE_READ_FREED_BLOCK), reported.toString());
        assertTrue(!reported.containsKey(RecvAndSendForAbortedLoadScenario.Outcome.UNEXPECTED), reported.toString());
        Map<RaceOutcome, Integer> upstream = explore(Race.RecvAndSendForAbortedLoad,
                Race.RecvAndSendForAbortedLoad.fixes(Variant.REPORTED).without(Fix.SCHEDULER_SKIP_LATE_REPORT));
        assertTrue(upstream.containsKey(RecvAndSendForAbortedLoadScenario.Outcome.ENGINE_DEAD), upstream.toString());
        Map<RaceOutcome, Integer> fixed = explore(Race.RecvAndSendForAbortedLoad, Race.RecvAndSendForAbortedLoad.fixes(Variant.FIXED));
        assertEquals(Set.of(RecvAndSendForAbortedLoadScenario.Outcome.ABORTED_CLEAN), fixed.keySet(), fixed.toString());
        System.out.println("RecvAndSendForAbortedLoad reported " + reported + ", without (3) " + upstream + ", fixed " + fixed);
    }
}
