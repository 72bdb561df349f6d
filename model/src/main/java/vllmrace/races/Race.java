package vllmrace.races;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.asyncio.YieldCondition;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.connector.BidirectionalTurn2ReadsExpiredScenario;
import vllmrace.races.connector.CancelBeforeSubmitStrandsPrefillScenario;
import vllmrace.races.connector.ExtraAsyncSavesDedupScenario;
import vllmrace.races.connector.ExtraSaveCountNeverDrainedScenario;
import vllmrace.races.connector.LateLoadCompletionUnionScenario;
import vllmrace.races.connector.PullIntoFreedBlocksScenario;
import vllmrace.races.connector.RecvAndSendForAbortedLoadScenario;
import vllmrace.races.connector.FailedRecvReportedTwiceScenario;
import vllmrace.races.connector.LeaseExpiredReadAfterFreeScenario;
import vllmrace.races.connector.LeaseReaperHeadOfLineScenario;
import vllmrace.races.connector.LookupLocksLeakOnEarlyAbortScenario;
import vllmrace.races.connector.SynthesizedSendForAbortedRetrieveScenario;
import vllmrace.races.connector.NonChosenChildBlindToLoadScenario;
import vllmrace.races.connector.NotifOnlyFailedRecvForRemovedScenario;
import vllmrace.races.connector.PushPostFailureAbortedLeaksScenario;
import vllmrace.races.connector.PushPostFailureDecodeWaitsScenario;
import vllmrace.races.connector.PushSendNeverReportedScenario;
import vllmrace.races.connector.SiblingHandleWritesAfterFailureScenario;
import vllmrace.races.frontend.CollectorMergesChunkBoundaryScenario;
import vllmrace.races.frontend.ConcurrentAbortKillsReaddScenario;
import vllmrace.races.frontend.DelayFreedIdReuseScenario;
import vllmrace.races.frontend.DpPauseLatchStuckScenario;
import vllmrace.races.frontend.StaleWaveWakesPausedRankScenario;
import vllmrace.races.frontend.DuplicateIdAbortWindowScenario;
import vllmrace.races.frontend.ParentRequestLeakOnAbortScenario;
import vllmrace.races.frontend.StopStringLateAbortScenario;
import vllmrace.races.scheduler.AbortLosesToFinalStepScenario;
import vllmrace.races.scheduler.AbortOfFinishedDelayFreedScenario;
import vllmrace.races.scheduler.AbortedLoadFreesBlocksScenario;
import vllmrace.races.scheduler.AbortedLoadLeakScenario;
import vllmrace.races.scheduler.AsyncFreeUnderInFlightStepScenario;
import vllmrace.races.scheduler.DelayFreedNeverReleasedScenario;
import vllmrace.races.scheduler.DoubleAbortApplicationScenario;
import vllmrace.races.scheduler.DoubleFreeOnAbortedAsyncSaveScenario;
import vllmrace.races.scheduler.IdleWithDelayFreedOnlyScenario;
import vllmrace.races.scheduler.PlaceholderUnderflowOnPreemptScenario;
import vllmrace.races.scheduler.PreemptedInFinalStepEmptyBlocksScenario;
import vllmrace.races.scheduler.ReusedIdStaleOutputUnderflowScenario;
import vllmrace.races.scheduler.SkippedWaitingAdmissionDeadlockScenario;
import vllmrace.races.scheduler.StoreReadsPreemptedBlocksScenario;

/**
 * The race registry: the one declaration of each race, read by every engine (the step enumerator, Lincheck, the
 * JCStress tests generated from it), the replays and the catalogue command. The constant's name is the race
 * identifier, used verbatim by its scenario, its generated JCStress test, its results row and its traces. A race's
 * story is its scenario's header ({@link Stories}); its outcomes and their meaning are its scenario's outcome enum.
 *
 * <p>Three fix sets per race ({@link Variant}): reported = every fix ON except the race's closers; fixed = every fix;
 * vLLM main = the merged fixes only. Each full closer closes the race on its own on top of the others (a partial one
 * removes part of it, and the registry names what it leaves; both are checked), so the race is expected closed on
 * vLLM main exactly when one of its full closers is merged upstream.
 */
public enum Race {
    DuplicateIdAbortWindow(
            Component.FRONTEND,
            "#15326 (seed 001)",
            Closers.of(Fix.ORDERED_ABORT, Fix.UNIQUE_INTERNAL_IDS),
            Expectation.BUG_FOUND,
            DuplicateIdAbortWindowScenario.Outcome.class,
            (fixes, config, p) -> new DuplicateIdAbortWindowScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of("n", 2))),
    DoubleFreeOnAbortedAsyncSave(
            Component.SCHEDULER,
            "#33377 (seed 000)",
            Closers.of(Fix.IS_FINISHED_GUARD),
            Expectation.BUG_FOUND,
            DoubleFreeOnAbortedAsyncSaveScenario.Outcome.class,
            (fixes, config, p) -> new DoubleFreeOnAbortedAsyncSaveScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2), Params.of("otherRequests", 1))),
    AbortOfFinishedDelayFreed(
            Component.SCHEDULER,
            "#25067",
            Closers.of(Fix.SKIP_ABORT_OF_FINISHED),
            Expectation.BUG_FOUND,
            AbortOfFinishedDelayFreedScenario.Outcome.class,
            (fixes, config, p) -> new AbortOfFinishedDelayFreedScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("stopToken", 1), Params.of("otherRequests", 1), Params.of("maxTokens", 2))),
    AbortLosesToFinalStep(
            Component.SCHEDULER,
            "#29987 (fixes #26400)",
            Closers.of(Fix.EAGER_ABORTS),
            Expectation.BUG_FOUND,
            AbortLosesToFinalStepScenario.Outcome.class,
            (fixes, config, p) -> new AbortLosesToFinalStepScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("stopToken", 1), Params.of("otherRequests", 1))),
    AbortedLoadFreesBlocks(
            Component.SCHEDULER,
            "#32255",
            Closers.of(Fix.DELAY_FREE_ABORTED_LOAD),
            Expectation.BUG_FOUND,
            AbortedLoadFreesBlocksScenario.Outcome.class,
            (fixes, config, p) -> new AbortedLoadFreesBlocksScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("promptBlocks", 2))),
    AbortedLoadLeak(
            Component.SCHEDULER,
            "#32255's review (its fix in main at 00024d31, PR not identified)",
            Closers.of(Fix.DELAY_FREE_UNLESS_RECVED, Fix.RECLAIM_ABORTED_RECV),
            Expectation.BUG_FOUND,
            AbortedLoadLeakScenario.Outcome.class,
            (fixes, config, p) -> new AbortedLoadLeakScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("promptBlocks", 2))),
    StopStringLateAbort(
            Component.FRONTEND,
            "#23697",
            Closers.of(Fix.ORDERED_FINISH_ABORT, Fix.UNIQUE_INTERNAL_IDS),
            Expectation.BUG_FOUND,
            StopStringLateAbortScenario.Outcome.class,
            (fixes, config, p) -> new StopStringLateAbortScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of("n", 2))),
    DelayFreedIdReuse(
            Component.FRONTEND,
            "#27987, #20139",
            Closers.of(Fix.UNIQUE_INTERNAL_IDS),
            Expectation.BUG_FOUND,
            DelayFreedIdReuseScenario.Outcome.class,
            (fixes, config, p) -> new DelayFreedIdReuseScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of("n", 2))),
    ExtraAsyncSavesDedup(
            Component.CONNECTOR,
            "MultiConnector _extra_async_saves (lifecycle §3(b))",
            Closers.none(),
            Expectation.NOT_APPLICABLE,
            ExtraAsyncSavesDedupScenario.Outcome.class,
            (fixes, config, p) -> new ExtraAsyncSavesDedupScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("savingChildren", 3))),
    LateLoadCompletionUnion(
            Component.CONNECTOR,
            "seed 003 (#53049)",
            Closers.of(Fix.MULTI_CONNECTOR_LOAD_DEDUP, Fix.LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN).partly(Fix.SCHEDULER_SKIP_LATE_REPORT, "CN1"),
            Expectation.BUG_FOUND,
            LateLoadCompletionUnionScenario.Outcome.class,
            (fixes, config, p) -> new LateLoadCompletionUnionScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("promptBlocks", 2), Params.of("stopToken", 1))),
    PullIntoFreedBlocks(
            Component.CONNECTOR,
            "seed 003 (#53049, aggravating factor)",
            Closers.of(Fix.NIXL_PIN_PULL_BLOCKS, Fix.MULTI_CONNECTOR_LOAD_DEDUP, Fix.LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN),
            Expectation.BUG_FOUND,
            PullIntoFreedBlocksScenario.Outcome.class,
            (fixes, config, p) -> new PullIntoFreedBlocksScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("promptBlocks", 2), Params.of("stopToken", 1))),
    RecvAndSendForAbortedLoad(
            Component.CONNECTOR,
            "#46240",
            Closers.of(Fix.NO_SAVE_WHILE_LOADING),
            Expectation.BUG_FOUND,
            RecvAndSendForAbortedLoadScenario.Outcome.class,
            (fixes, config, p) -> new RecvAndSendForAbortedLoadScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("promptBlocks", 2))),
    ConcurrentAbortKillsReadd(
            Component.FRONTEND,
            "#15326 residual (found by this suite)",
            Closers.of(Fix.UNIQUE_INTERNAL_IDS),
            Expectation.BUG_FOUND,
            ConcurrentAbortKillsReaddScenario.Outcome.class,
            (fixes, config, p) -> new ConcurrentAbortKillsReaddScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of("n", 2))),
    IdleWithDelayFreedOnly(
            Component.SCHEDULER,
            "#43433 (symptom #41180)",
            Closers.of(Fix.HAS_REQUESTS_COUNTS_DELAY_FREED),
            Expectation.BUG_FOUND,
            Window.ORDER,
            IdleWithDelayFreedOnlyScenario.Outcome.class,
            (fixes, config, p) -> new IdleWithDelayFreedOnlyScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("stopToken", 1), Params.of("otherRequests", 1), Params.of("maxTokens", 2))),
    DelayFreedNeverReleased(
            Component.SCHEDULER,
            "#46283, PR #46289",
            Closers.of(Fix.RECLAIM_ABORTED_RECV),
            Expectation.BUG_FOUND,
            Window.LOST_EVENT,
            DelayFreedNeverReleasedScenario.Outcome.class,
            (fixes, config, p) -> new DelayFreedNeverReleasedScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("promptBlocks", 2))),
    SkippedWaitingAdmissionDeadlock(
            Component.SCHEDULER,
            "PR #57841 (same end state #57104, #53130)",
            Closers.of(Fix.NO_LOAD_BEHIND_BLOCKLESS),
            Expectation.BUG_FOUND,
            SkippedWaitingAdmissionDeadlockScenario.Outcome.class,
            (fixes, config, p) -> new SkippedWaitingAdmissionDeadlockScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("promptBlocks", 2))),
    DoubleAbortApplication(
            Component.SCHEDULER,
            "#29987 with reused ids (found by this suite)",
            Closers.of(Fix.UNIQUE_INTERNAL_IDS, Fix.ABORT_APPLIED_ONCE),
            Expectation.BUG_FOUND,
            Window.SEQUENTIAL,
            DoubleAbortApplicationScenario.Outcome.class,
            (fixes, config, p) -> new DoubleAbortApplicationScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    AsyncFreeUnderInFlightStep(
            Component.SCHEDULER,
            "#45357 (also vllm-ascend #14055)",
            Closers.of(Fix.DEFER_BLOCK_FREE),
            Expectation.BUG_FOUND,
            Window.ORDER,
            AsyncFreeUnderInFlightStepScenario.Outcome.class,
            (fixes, config, p) -> new AsyncFreeUnderInFlightStepScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    PlaceholderUnderflowOnPreempt(
            Component.SCHEDULER,
            "#48245 (reworks #47900; family #46066, #45430, #42492)",
            Closers.of(Fix.STALE_OUTPUT_AFTER_PREEMPT),
            Expectation.BUG_FOUND,
            Window.ORDER,
            PlaceholderUnderflowOnPreemptScenario.Outcome.class,
            (fixes, config, p) -> new PlaceholderUnderflowOnPreemptScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("promptBlocks", 2))),
    PreemptedInFinalStepEmptyBlocks(
            Component.SCHEDULER,
            "#50297 (replaces #48141; built on #48245)",
            Closers.of(Fix.REQUIRES_KV_DELIVERY),
            Expectation.BUG_FOUND,
            Window.ORDER,
            PreemptedInFinalStepEmptyBlocksScenario.Outcome.class,
            (fixes, config, p) -> new PreemptedInFinalStepEmptyBlocksScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("stopToken", 1), Params.of("promptBlocks", 2))),
    StoreReadsPreemptedBlocks(
            Component.SCHEDULER,
            "#52360, fix #52372 (ABA twin #51637)",
            Closers.of(Fix.STORE_JOB_BLOCK_REF),
            Expectation.BUG_FOUND,
            Window.ORDER,
            StoreReadsPreemptedBlocksScenario.Outcome.class,
            (fixes, config, p) -> new StoreReadsPreemptedBlocksScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    ReusedIdStaleOutputUnderflow(
            Component.SCHEDULER,
            "#42492 (rediscovered by this suite's race hunt)",
            Closers.of(Fix.UNIQUE_INTERNAL_IDS),
            Expectation.BUG_FOUND,
            Window.SEQUENTIAL,
            ReusedIdStaleOutputUnderflowScenario.Outcome.class,
            (fixes, config, p) -> new ReusedIdStaleOutputUnderflowScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 3))),
    FailedRecvReportedTwice(
            Component.CONNECTOR,
            "#54518 (closed again by #56104)",
            Closers.of(Fix.FAILED_RECV_REPORTED_ONCE, Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP),
            Expectation.BUG_FOUND,
            FailedRecvReportedTwiceScenario.Outcome.class,
            (fixes, config, p) -> new FailedRecvReportedTwiceScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    SiblingHandleWritesAfterFailure(
            Component.CONNECTOR,
            "#56104",
            Closers.of(Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP),
            Expectation.BUG_FOUND,
            SiblingHandleWritesAfterFailureScenario.Outcome.class,
            (fixes, config, p) -> new SiblingHandleWritesAfterFailureScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    PushSendNeverReported(
            Component.CONNECTOR,
            "PR #58188 (open; a regression of #56104)",
            Closers.of(Fix.PUSH_SEND_REPORTED_PER_DIRECTION),
            Expectation.BUG_FOUND,
            Window.LOST_EVENT,
            PushSendNeverReportedScenario.Outcome.class,
            (fixes, config, p) -> new PushSendNeverReportedScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    NotifOnlyFailedRecvForRemoved(
            Component.CONNECTOR,
            "#57570",
            Closers.of(Fix.NOTIF_ONLY_NOT_RECV_TRACKED, Fix.SCHEDULER_SKIP_LATE_REPORT),
            Expectation.BUG_FOUND,
            Window.ORDER,
            NotifOnlyFailedRecvForRemovedScenario.Outcome.class,
            (fixes, config, p) -> new NotifOnlyFailedRecvForRemovedScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("promptBlocks", 2))),
    LeaseReaperHeadOfLine(
            Component.CONNECTOR,
            "#58222, PR #50789 (both open)",
            Closers.of(Fix.REAP_EVERY_EXPIRED_LEASE),
            Expectation.BUG_FOUND,
            LeaseReaperHeadOfLineScenario.Outcome.class,
            (fixes, config, p) -> new LeaseReaperHeadOfLineScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    LookupLocksLeakOnEarlyAbort(
            Component.CONNECTOR,
            "#44100, PR #44101 (both open)",
            Closers.of(Fix.FREE_LOOKUP_LOCKS_ON_CLEANUP),
            Expectation.BUG_FOUND,
            LookupLocksLeakOnEarlyAbortScenario.Outcome.class,
            (fixes, config, p) -> new LookupLocksLeakOnEarlyAbortScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1))),
    SynthesizedSendForAbortedRetrieve(
            Component.CONNECTOR,
            "LMCache #4938, PR #4939 (both open; rediscovered by this suite's race hunt)",
            Closers.of(Fix.LMCACHE_MP_ABORTED_RETRIEVE_NOT_STORED),
            Expectation.BUG_FOUND,
            SynthesizedSendForAbortedRetrieveScenario.Outcome.class,
            (fixes, config, p) -> new SynthesizedSendForAbortedRetrieveScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1))),
    LeaseExpiredReadAfterFree(
            Component.CONNECTOR,
            "downstream reports (aws-do-eks #84, aibrix #1772); lease design #41383, #43099",
            Closers.of(Fix.DECLINE_EXPIRED_REMOTE_READ),
            Expectation.BUG_FOUND,
            Window.ORDER,
            LeaseExpiredReadAfterFreeScenario.Outcome.class,
            (fixes, config, p) -> new LeaseExpiredReadAfterFreeScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    BidirectionalTurn2ReadsExpired(
            Component.CONNECTOR,
            "#47021",
            Closers.of(Fix.TURN2_READ_EXPIRY_CHECK),
            Expectation.BUG_FOUND,
            Window.ORDER,
            BidirectionalTurn2ReadsExpiredScenario.Outcome.class,
            (fixes, config, p) -> new BidirectionalTurn2ReadsExpiredScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    PushPostFailureDecodeWaits(
            Component.CONNECTOR,
            "PR #50754 (open; row C2 of #48633)",
            Closers.of(Fix.PUSH_FAILURE_NOTIFIED),
            Expectation.BUG_FOUND,
            Window.LOST_EVENT,
            PushPostFailureDecodeWaitsScenario.Outcome.class,
            (fixes, config, p) -> new PushPostFailureDecodeWaitsScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    PushPostFailureAbortedLeaks(
            Component.CONNECTOR,
            "#46283's leak through PR #50754's lost notification (both open; found by this suite's hunt on vLLM main)",
            Closers.of(Fix.PUSH_FAILURE_NOTIFIED, Fix.RECLAIM_ABORTED_RECV),
            Expectation.BUG_FOUND,
            Window.LOST_EVENT,
            PushPostFailureAbortedLeaksScenario.Outcome.class,
            (fixes, config, p) -> new PushPostFailureAbortedLeaksScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1))),
    ExtraSaveCountNeverDrained(
            Component.CONNECTOR,
            "#53903 (after #52779)",
            Closers.of(Fix.PCP_REPLICA_REPORTS_SENT),
            Expectation.BUG_FOUND,
            Window.LOST_EVENT,
            ExtraSaveCountNeverDrainedScenario.Outcome.class,
            (fixes, config, p) -> new ExtraSaveCountNeverDrainedScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    NonChosenChildBlindToLoad(
            Component.CONNECTOR,
            "#46951, PR #47046 (both open; after #46865, merged)",
            Closers.of(Fix.OFFLOAD_FENCE_NON_CHOSEN_BLOCKS),
            Expectation.BUG_FOUND,
            Window.ORDER,
            NonChosenChildBlindToLoadScenario.Outcome.class,
            (fixes, config, p) -> new NonChosenChildBlindToLoadScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    ParentRequestLeakOnAbort(
            Component.FRONTEND,
            "PR #51629 (open)",
            Closers.of(Fix.PARENT_RELEASED_ON_ABORT),
            Expectation.BUG_FOUND,
            Window.ORDER,
            ParentRequestLeakOnAbortScenario.Outcome.class,
            (fixes, config, p) -> new ParentRequestLeakOnAbortScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of("priorUse", 1), Params.of("maxTokens", 2))),
    CollectorMergesChunkBoundary(
            Component.FRONTEND,
            "PR #53861 (open)",
            Closers.of(Fix.COLLECTOR_KEEPS_BOUNDARIES),
            Expectation.BUG_FOUND,
            Window.ORDER,
            CollectorMergesChunkBoundaryScenario.Outcome.class,
            (fixes, config, p) -> new CollectorMergesChunkBoundaryScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of("priorUse", 1), Params.of("c1Tokens", 2))),
    CancelBeforeSubmitStrandsPrefill(
            Component.CONNECTOR,
            "#50425 (open; Mooncake); cf. #41269",
            Closers.of(Fix.NOTIFY_REJECT_ON_PRE_ADD_CANCEL),
            Expectation.BUG_FOUND,
            Window.ORDER,
            CancelBeforeSubmitStrandsPrefillScenario.Outcome.class,
            (fixes, config, p) -> new CancelBeforeSubmitStrandsPrefillScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of(RigScenario.PRIOR_USE, 1), Params.of("maxTokens", 2))),
    DpPauseLatchStuck(
            Component.FRONTEND,
            "PR #51481 (merged; RFC #51476)",
            Closers.of(Fix.DP_WAKE_DOES_NOT_ASSUME_RUNNING),
            Expectation.BUG_FOUND,
            Window.ORDER,
            DpPauseLatchStuckScenario.Outcome.class,
            (fixes, config, p) -> new DpPauseLatchStuckScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of("priorUse", 1), Params.of("maxTokens", 2))),
    StaleWaveWakesPausedRank(
            Component.FRONTEND,
            "PR #39366 (merged); #38761",
            Closers.of(Fix.DP_TWO_PHASE_PAUSE),
            Expectation.BUG_FOUND,
            Window.ORDER,
            StaleWaveWakesPausedRankScenario.Outcome.class,
            (fixes, config, p) -> new StaleWaveWakesPausedRankScenario(fixes, config, p),
            List.of(Params.DEFAULT, Params.of("priorUse", 1), Params.of("maxTokens", 2)));

    /** Builds a race's scenario: the fixes ON, the deployment's configuration, a point of its family. */
    @FunctionalInterface
    interface ScenarioFactory {
        RaceScenario create(FixSet fixes, Configuration configuration, Params point);
    }


    private final Component component;
    private final String upstream;
    private final Closers closers;
    private final Expectation reportedExpectation;
    private final Class<? extends RaceOutcome> outcomes;
    private final ScenarioFactory scenario;
    private final List<Params> grid;
    private final Window window;

    <O extends Enum<O> & RaceOutcome> Race(Component component, String upstream, Closers closers,
                                         Expectation reportedExpectation, Class<O> outcomes,
                                         ScenarioFactory scenario, List<Params> grid) {
        this(component, upstream, closers, reportedExpectation, Window.INTERLEAVING, outcomes, scenario, grid);
    }

    <O extends Enum<O> & RaceOutcome> Race(Component component, String upstream, Closers closers,
                                         Expectation reportedExpectation, Window window, Class<O> outcomes,
                                         ScenarioFactory scenario, List<Params> grid) {
        this.window = Objects.requireNonNull(window, "window");
        this.component = component;
        this.upstream = upstream;
        this.closers = closers;
        this.reportedExpectation = reportedExpectation;
        this.outcomes = outcomes;
        this.scenario = scenario;
        this.grid = List.copyOf(grid);
        if (grid.isEmpty() || !grid.get(0).equals(Params.DEFAULT)) {
            throw new IllegalArgumentException(name() + ": a grid starts at the default point");
        }
    }

    public Component component() {
        return component;
    }

    /** What opens the window: an interleaving of the actors' steps, or the order of two events ({@link Window}). */
    public Window window() {
        return window;
    }

    /** The upstream PR / issue / seed. */
    public String upstream() {
        return upstream;
    }

    /** The scenario class: the class its outcome enum is declared in. */
    public Class<?> scenarioClass() {
        return outcomes.getEnclosingClass();
    }

    /** The fixes that close this race, fully or in part ({@link Closers}), as the registry declares them. */
    public Closers closers() {
        return closers;
    }

    /** Every closer, full and partial: what the reported variant switches off. */
    public Set<Fix> closedBy() {
        return closers.all();
    }

    /** The full closers vLLM has merged, in declaration order: what closes the race on vLLM main's default profile. */
    public List<Fix> closedOnMainBy() {
        return closedOnMainBy(Profile.MAIN);
    }

    /**
     * The full closers vLLM has merged whose code path {@code profile}'s configuration keeps (a switch such as
     * {@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1} takes #27987's away), in declaration order: what closes the race
     * on that deployment.
     */
    public List<Fix> closedOnMainBy(Profile profile) {
        return Arrays.stream(Fix.values()).filter(closers.full()::contains).filter(f -> profile.fixes().isOn(f))
                .filter(f -> !profile.configuration().takesAway(f)).toList();
    }

    /** The fixes ON in a variant (vLLM main: the {@link Profile#MAIN} profile's). */
    public FixSet fixes(Variant variant) {
        return switch (variant) {
            case REPORTED -> withoutClosers(Set.of());
            case FIXED -> FixSet.all();
            case UPSTREAM_MAIN -> Profile.MAIN.fixes();
            case ONLY_CLOSER -> throw new IllegalArgumentException("an only-closer cell names its closer: fixes(Fix)");
        };
    }

    /** Every fix but this race's other closers: {@code closer} alone closes it (fully, or in part). */
    public FixSet fixesWithOnly(Fix closer) {
        if (!closers.all().contains(closer)) {
            throw new IllegalArgumentException(closer + " is no closer of " + name());
        }
        return withoutClosers(Set.of(closer));
    }

    private FixSet withoutClosers(Set<Fix> except) {
        FixSet fixes = FixSet.all();
        for (Fix fix : closers.all()) {
            if (!except.contains(fix)) {
                fixes = fixes.without(fix);
            }
        }
        return fixes;
    }

    /** What a variant must show: reported as declared; fixed clean; vLLM main as its {@link Profile#MAIN} profile. */
    public Expectation expected(Variant variant) {
        return switch (variant) {
            case REPORTED -> reportedExpectation;
            case FIXED, ONLY_CLOSER -> Expectation.CLEAN;
            case UPSTREAM_MAIN -> expected(Profile.MAIN);
        };
    }

    /**
     * What a deployment of vLLM main must show: clean iff a full closer is merged and the profile keeps its code path, or
     * the race's window needs a yield the deployment cannot produce ({@link #needsYield()}); not applicable where the
     * profile's scheduler class cannot reach the race ({@link #occursUnder}).
     */
    public Expectation expected(Profile profile) {
        if (!occursUnder(profile.configuration().schedulerKind())) {
            return Expectation.NOT_APPLICABLE;
        }
        if (!needsYield().isEmpty() && java.util.Collections.disjoint(needsYield(), profile.configuration().yields())) {
            return Expectation.CLEAN;
        }
        return closers.isEmpty() || !closedOnMainBy(profile).isEmpty() ? Expectation.CLEAN : Expectation.BUG_FOUND;
    }

    /**
     * The yield conditions the race's window needs, any one of them (empty: none). A frontend race whose two actions are
     * joined into one atomic step by upstream's awaits exists only where one of these makes the await between them
     * suspend; its reported, fixed and only-closer variants run with them holding ({@link #configuration()}), and a
     * deployment that can produce none of them is clean. {@code YieldNeedsTest} checks the declaration both ways.
     */
    public Set<vllmrace.model.asyncio.YieldCondition> needsYield() {
        return switch (this) {
            // abort: output_processor.abort_requests and the ABORT's send_multipart run in one step; #15326 inserted a sleep
            case DuplicateIdAbortWindow -> EnumSet.of(YieldCondition.AWAIT_INSERTED_BEFORE_SEND);
            // the late ABORT needs an await before its send; the late state drop, one after it (#15326's ordered abort)
            case ConcurrentAbortKillsReadd -> EnumSet.of(YieldCondition.AWAIT_INSERTED_BEFORE_SEND, YieldCondition.SEND_BACK_PRESSURE);
            // output_handler's asyncio.sleep(0) between chunks sits between process_outputs and the stop string's ABORT
            case StopStringLateAbort -> EnumSet.of(YieldCondition.OUTPUT_BATCH_OVER_CHUNK, YieldCondition.AWAIT_INSERTED_BEFORE_SEND);
            default -> EnumSet.noneOf(YieldCondition.class);
        };
    }

    /** The configuration the race's reported, fixed and only-closer variants run under: upstream's defaults, {@link #needsYield()} holding. */
    public Configuration configuration() {
        return Configuration.DEFAULT.withYields(needsYield());
    }

    /**
     * Whether the race can happen under a scheduler class. The races below need overlapping batches: a step still in
     * flight while the scheduler acts on an earlier step's output (#45357's in-flight write, #50297's preemption during a
     * final step) or the AsyncScheduler's output placeholders (#48245). With the sync {@code Scheduler} (one batch in
     * flight, no placeholders) their set-up cannot be reached or every interleaving is clean; {@code SchedulerKindTest}
     * checks this declaration both ways on the reported variant, and each scenario's story says it.
     */
    public boolean occursUnder(vllmrace.model.sched.SchedulerKind kind) {
        return kind == vllmrace.model.sched.SchedulerKind.ASYNC_SCHEDULER || switch (this) {
            case AsyncFreeUnderInFlightStep, PlaceholderUnderflowOnPreempt, PreemptedInFinalStepEmptyBlocks,
                 ReusedIdStaleOutputUnderflow -> false;
            default -> true;
        };
    }


    /** A fresh scenario on a fresh model for a variant (reported, fixed or vLLM main), upstream's default configuration. */
    public RaceScenario scenario(Variant variant) {
        return scenario(fixes(variant));
    }

    /** A fresh scenario under any combination of fixes, at the default point of its family (the fix matrices use this). */
    public RaceScenario scenario(FixSet fixes) {
        return scenario(fixes, grid.get(0));
    }

    /** A fresh scenario under {@code fixes} at one point of its family, the race's {@link #configuration()}. */
    public RaceScenario scenario(FixSet fixes, Params point) {
        return scenario(fixes, configuration(), point);
    }

    /** A fresh scenario under {@code fixes}, deployed with {@code configuration}, at one point of its family. */
    public RaceScenario scenario(FixSet fixes, Configuration configuration, Params point) {
        return scenario.create(Objects.requireNonNull(fixes, "fixes"), Objects.requireNonNull(configuration, "configuration"),
                Objects.requireNonNull(point, "point"));
    }

    /**
     * The scenario's family: the points the step enumerator asserts the race's verdicts at (the first is the default
     * point, which Lincheck, JCStress, the fix matrix and the replays use).
     */
    public List<Params> grid() {
        return grid;
    }

    /** The outcome a harness reported under its name (a JCStress state key). */
    public RaceOutcome outcome(String name) {
        for (RaceOutcome outcome : outcomes()) {
            if (((Enum<?>) outcome).name().equals(name)) {
                return outcome;
            }
        }
        throw new IllegalArgumentException(name() + " has no outcome named '" + name + "'");
    }

    /** The scenario's outcomes, then the modelling error every race shares ({@link RaceOutcome#UNEXPECTED}). */
    public RaceOutcome[] outcomes() {
        RaceOutcome[] own = outcomes.getEnumConstants();
        RaceOutcome[] all = new RaceOutcome[own.length + 1];
        System.arraycopy(own, 0, all, 0, own.length);
        all[own.length] = modellingError();
        return all;
    }

    /** The modelling-error outcome of this race's runs: the one every race shares. */
    public RaceOutcome modellingError() {
        return RaceOutcome.modellingErrorOf(outcomes);
    }

}
