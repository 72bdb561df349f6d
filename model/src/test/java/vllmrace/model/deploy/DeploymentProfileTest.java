package vllmrace.model.deploy;

import vllmrace.races.Labels;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.MultiConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.InputProcessor;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;
import vllmrace.races.Expectation;
import vllmrace.races.Race;

/**
 * The deployment profiles and the configuration switches the model reads, each against the upstream line it mirrors;
 * and the registry's per-profile expectations that follow from them.
 */
class DeploymentProfileTest {

    /**
     * input_processor.py@009daaee {@code assign_request_id}: {@code if envs.VLLM_DISABLE_REQUEST_ID_RANDOMIZATION:
     * (warning) else: request.request_id = f"{request.external_req_id}-{random_uuid():.8}"}.
     */
    @Test
    void idsNotRandomizedKeepTheClientsIdEvenWithTheSuffixFixMerged() {
        FixSet main = Profile.MAIN.fixes();
        assertTrue(main.isOn(Fix.UNIQUE_INTERNAL_IDS), "#27987 is merged");
        assertEquals("A-1", InputProcessor.assignRequestId(main, Configuration.DEFAULT, "A", 1));
        assertEquals("A", InputProcessor.assignRequestId(main, Profile.MAIN_IDS_NOT_RANDOMIZED.configuration(), "A", 1));
        assertEquals("A", InputProcessor.assignRequestId(main.without(Fix.UNIQUE_INTERNAL_IDS), Configuration.DEFAULT, "A", 1));
    }

    /** A pool with R's block allocated, R offered by both children, the first (NIXL) chosen. */
    private static final class TwoChildren {
        final ViolationLog log = new ViolationLog();
        final KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
        final Request r = new Request("R", 1, 4, 1);
        final NixlDecodeConnector nixl;
        final LmCacheConnector lmcache;

        TwoChildren(FixSet fixes, Configuration configuration) {
            nixl = new NixlDecodeConnector("NIXL", kv, fixes);
            lmcache = new LmCacheConnector("LMCacheMP", kv, false, fixes, configuration);
            nixl.remotePrefill("R", 4);
            lmcache.cachedPrefix("R", 4);
            kv.allocateSlots("R", 4);
            MultiConnector multi = new MultiConnector(fixes, List.of(nixl, lmcache));
            assertEquals(4, multi.getNumNewMatchedTokens(r, 0).numExternalTokens());
            assertEquals(0, multi.chosenConnector("R"), "the first child with a non-zero match is chosen");
            multi.updateStateAfterAlloc(r, kv.getBlockIds("R"), 4);
        }
    }

    /**
     * lmcache_mp_connector.py after #47505: {@code condition = tracker.needs_retrieve() and num_external_tokens > 0}; before
     * it (@474b0b8c) and in LMCache's own connector (LMCache@5edba3af) {@code condition = tracker.needs_retrieve()}.
     */
    @Test
    void theInTreeLmCacheChildLoadsOnlyWhenChosenAndTheOutOfTreeOneAlways() {
        TwoChildren inTree = new TwoChildren(Profile.MAIN.fixes(), Configuration.DEFAULT);
        assertTrue(inTree.nixl.isPullInFlight("R"));
        assertFalse(inTree.lmcache.hasUnreportedLoad("R"), "#47505: 0 external tokens, no retrieve");
        TwoChildren before = new TwoChildren(Profile.MAIN.fixes().without(Fix.LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN), Configuration.DEFAULT);
        assertTrue(before.lmcache.hasUnreportedLoad("R"), "before #47505 the non-chosen child loads into the real blocks");
        TwoChildren outOfTree = new TwoChildren(Profile.MAIN_OOT_LMCACHE.fixes(), Profile.MAIN_OOT_LMCACHE.configuration());
        assertTrue(outOfTree.lmcache.hasUnreportedLoad("R"), "LMCache's own MP connector ignores num_external_tokens");
    }

    /**
     * multi_connector.py@a4a2a8ee: {@code c.update_state_after_alloc(request, empty_blocks, 0)} for the others; @00f4240e
     * (#46865): {@code c.update_state_after_alloc(request, blocks, 0)}. Without real blocks even a child that ignores the
     * signal has nothing to load into.
     */
    @Test
    void beforeTheRealBlocksFixANonChosenChildHadNoBlocksToLoadInto() {
        FixSet before = Profile.MAIN.fixes().without(Fix.NON_CHOSEN_REAL_BLOCKS);
        TwoChildren outOfTree = new TwoChildren(before, Profile.MAIN_OOT_LMCACHE.configuration());
        assertTrue(outOfTree.nixl.isPullInFlight("R"), "the chosen child still gets the blocks");
        assertFalse(outOfTree.lmcache.hasUnreportedLoad("R"));
    }

    @Test
    void aProfileIsMainsMergedFixesUnderItsConfiguration() {
        for (Profile profile : Profile.values()) {
            assertEquals(FixSet.upstreamMain(), profile.fixes(), profile + ": a profile changes configuration, never code");
            assertEquals(profile, Profile.byId(profile.id()));
        }
        // upstream's defaults, with every yield condition vLLM can produce holding (and only those)
        assertEquals(Configuration.DEFAULT.withYields(java.util.EnumSet.of(vllmrace.model.asyncio.YieldCondition.OUTPUT_BATCH_OVER_CHUNK)),
                Profile.MAIN.configuration());
        for (Profile profile : Profile.values()) {
            assertEquals(vllmrace.model.asyncio.YieldCondition.producedByVllmMain(), profile.configuration().yields(), profile.id());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Profile.byId("mian"));
        assertEquals("no profile 'mian'; known profiles: main, main-ids-not-randomized, main-oot-lmcache, main-sync-scheduling",
                e.getMessage());
        for (ConfigSwitch setting : ConfigSwitch.values()) {
            // a switch changes a verdict by taking a merged fix's path away, or by choosing the scheduler class
            assertTrue(setting.takesAway().isPresent() != setting.selectsSyncScheduler(), setting.name());
            setting.takesAway().ifPresent(fix -> {
                assertTrue(fix.provenance().merged(), setting + " takes away a merged fix, else it changes no verdict");
                assertTrue(Configuration.of(setting).takesAway(fix));
                assertFalse(Configuration.DEFAULT.takesAway(fix));
            });
        }
        assertEquals(vllmrace.model.sched.SchedulerKind.ASYNC_SCHEDULER, Configuration.DEFAULT.schedulerKind());
        assertEquals(vllmrace.model.sched.SchedulerKind.SCHEDULER, Profile.MAIN_SYNC_SCHEDULING.configuration().schedulerKind());
        assertEquals(1, Profile.MAIN_SYNC_SCHEDULING.configuration().batchQueueSize(3));
        assertEquals(3, Configuration.DEFAULT.batchQueueSize(3));
    }

    /** Which races each profile reopens follows from the declarations; the engines compute the verdicts against it. */
    @Test
    void theRegistrysPerProfileExpectationsFollowFromWhatEachSwitchTakesAway() {
        List<Race> reopenedWithoutRandomIds = java.util.Arrays.stream(Race.values())
                .filter(r -> r.expected(Profile.MAIN) == Expectation.CLEAN && r.expected(Profile.MAIN_IDS_NOT_RANDOMIZED) == Expectation.BUG_FOUND)
                .toList();
        // DuplicateIdAbortWindow and ConcurrentAbortKillsReadd need an await vLLM never suspends at (Race.needsYield)
        assertEquals(List.of(Race.StopStringLateAbort, Race.DelayFreedIdReuse, Race.DoubleAbortApplication,
                Race.ReusedIdStaleOutputUnderflow), reopenedWithoutRandomIds);
        assertEquals("clean (no await in its window yields)", Labels.expectedLabel(Race.DuplicateIdAbortWindow, Profile.MAIN_IDS_NOT_RANDOMIZED));
        assertEquals("closed (by #27987)", Labels.expectedLabel(Race.DuplicateIdAbortWindow, Profile.MAIN));
        assertEquals("racy (output batch over 128 outputs)", Labels.expectedLabel(Race.StopStringLateAbort, Profile.MAIN_IDS_NOT_RANDOMIZED));
        List<Race> reopenedOutOfTree = java.util.Arrays.stream(Race.values())
                .filter(r -> r.expected(Profile.MAIN) == Expectation.CLEAN && r.expected(Profile.MAIN_OOT_LMCACHE) == Expectation.BUG_FOUND)
                .toList();
        assertEquals(List.of(Race.LateLoadCompletionUnion, Race.PullIntoFreedBlocks), reopenedOutOfTree);
        assertEquals("closed (by #47505)", Labels.expectedLabel(Race.LateLoadCompletionUnion, Profile.MAIN));
        assertEquals("racy", Labels.expectedLabel(Race.LateLoadCompletionUnion, Profile.MAIN_OOT_LMCACHE));
        assertEquals("closed (in main at 00024d31, PR not identified)", Labels.expectedLabel(Race.AbortedLoadLeak, Profile.MAIN));
    }
}
