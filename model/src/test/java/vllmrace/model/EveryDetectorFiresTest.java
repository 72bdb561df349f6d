package vllmrace.model;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.FrontendSeams;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheBlock;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.ModelRunnerOutput;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;
import vllmrace.model.sched.Scheduler;
import vllmrace.model.sched.SchedulerOutput;
import vllmrace.model.sched.SchedulerSeams;
import vllmrace.races.Race;
import vllmrace.races.RaceScenario;
import vllmrace.races.Schedule;
import vllmrace.races.Variant;

/**
 * Every detector of the model fires: one situation per {@link ViolationKind} that records it, so no detector can be
 * dead code that a wrong fix slips past. Through the model's own paths where one reaches the state; through a
 * broken-model seam ({@code SchedulerSeams}, {@code FrontendSeams}) where none does. The check runs over every kind,
 * so a new kind without its situation fails here.
 */
class EveryDetectorFiresTest {

    private static final Map<ViolationKind, Supplier<List<Violation>>> SITUATIONS = new EnumMap<>(ViolationKind.class);

    static {
        SITUATIONS.put(ViolationKind.DUPLICATE_LIVE_REQUEST, () -> {
            ViolationLog log = new ViolationLog();
            Scheduler s = new Scheduler(FixSet.all(), log);
            s.addRequest(new Request("X", 1, 4));
            s.addRequest(new Request("X", 2, 4));
            return log.all();
        });
        SITUATIONS.put(ViolationKind.ABORT_HIT_WRONG_REQUEST, () -> firstScheduleWith(Race.ConcurrentAbortKillsReadd,
                ViolationKind.ABORT_HIT_WRONG_REQUEST));
        SITUATIONS.put(ViolationKind.ORPHANED_FRONTEND_REQUEST, () -> {
            VllmInstance vllm = new VllmInstance(FixSet.all());
            vllm.asyncLlm().addRequest("X", 4).run().join();
            vllm.engineCore().processInputQueue();
            vllm.scheduler().finishRequests(List.of("X-1"), RequestStatus.FINISHED_ABORTED); // behind the frontend's back
            vllm.checkQuiescence();
            return vllm.violations().all();
        });
        SITUATIONS.put(ViolationKind.ENGINE_REQUEST_WITHOUT_FRONTEND, () -> {
            VllmInstance vllm = new VllmInstance(FixSet.all());
            vllm.inputSocket().send(new EngineCoreMessage.Add(new EngineCoreRequest("X", 1, 4))); // no frontend state
            vllm.engineCore().processInputQueue();
            vllm.checkQuiescence();
            return vllm.violations().all();
        });
        SITUATIONS.put(ViolationKind.LEAKED_PARENT_REQUEST, () -> quiescent(FrontendSeams.parentOutlivesItsChildren()));
        SITUATIONS.put(ViolationKind.CHILD_WITHOUT_PARENT_REQUEST, () -> quiescent(FrontendSeams.childOutlivesItsParent()));
        SITUATIONS.put(ViolationKind.PREFILL_BLOCKS_STRANDED, () -> {
            vllmrace.races.RaceScenario scenario = vllmrace.races.Race.CancelBeforeSubmitStrandsPrefill.scenario(
                    FixSet.all().without(Fix.NOTIFY_REJECT_ON_PRE_ADD_CANCEL));
            scenario.actor2().run(); // the client disconnects before generate() added R
            scenario.actor1().run();
            scenario.arbiter();
            return scenario.violations();
        });
        SITUATIONS.put(ViolationKind.DRAIN_NEVER_RETURNS, () -> {
            // #51481 off: the coordinator sets engines_running on a wake that paused ranks ignore
            vllmrace.model.dp.DpDeployment dp = new vllmrace.model.dp.DpDeployment(FixSet.all().without(Fix.DP_WAKE_DOES_NOT_ASSUME_RUNNING),
                    vllmrace.model.deploy.Configuration.DEFAULT);
            dp.pauseGeneration();
            dp.iterate(); // pause consensus: START ignored from now on
            dp.addRequest("X", 1);
            while (dp.iterate()) {
                // nothing steps
            }
            dp.checkQuiescence();
            return dp.violations().all();
        });
        SITUATIONS.put(ViolationKind.DP_STEP_WITHOUT_PEER, () -> {
            // #39366 off: a START on its way wakes rank 0 after both ranks paused at once
            vllmrace.model.dp.DpDeployment dp = new vllmrace.model.dp.DpDeployment(FixSet.all().without(Fix.DP_TWO_PHASE_PAUSE),
                    vllmrace.model.deploy.Configuration.DEFAULT);
            dp.addRequest("X", 1);
            dp.pauseGeneration();
            dp.iterate();
            return dp.violations().all();
        });
        SITUATIONS.put(ViolationKind.CHUNK_BOUNDARY_LOST, () -> {
            VllmInstance vllm = new VllmInstance(FixSet.none());
            vllmrace.model.frontend.RequestOutputCollector queue = vllm.asyncLlm().addStreamingRequest("X", 1, 2).run().join();
            vllm.engineCore().runBusyLoopOnce(); // c1's boundary
            vllm.engineCore().runBusyLoopOnce(); // c2's first token, before the output handler ran
            vllm.asyncLlm().outputHandler().run();
            vllm.checkCollector(queue);
            return vllm.violations().all();
        });
        SITUATIONS.put(ViolationKind.DOUBLE_FREE_REQUEST, () -> {
            ViolationLog log = new ViolationLog();
            KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
            Scheduler s = new Scheduler(FixSet.all().without(Fix.SKIP_ABORT_OF_FINISHED), log, kv,
                    new TestAsyncConnector(kv, TestAsyncConnector.SavePolicy.ALWAYS));
            s.addRequest(new Request("R", 1, 4, 1));
            s.schedule(); // R holds a block
            s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED); // saved: R stays, finished
            s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
            return log.all();
        });
        SITUATIONS.put(ViolationKind.FINISHED_WITHOUT_FREE_REQUEST, () -> SchedulerSeams.finishedWithoutFreeRequest().all());
        SITUATIONS.put(ViolationKind.FREE_BLOCKS_OF_MISSING_REQUEST, () -> SchedulerSeams.freeBlocksTwice().all());
        SITUATIONS.put(ViolationKind.OUTPUT_FOR_FINISHED_REQUEST, () -> firstScheduleWith(Race.DoubleFreeOnAbortedAsyncSave,
                ViolationKind.OUTPUT_FOR_FINISHED_REQUEST));
        SITUATIONS.put(ViolationKind.BLOCK_DOUBLE_FREE, () -> {
            ViolationLog log = new ViolationLog();
            BlockPool pool = new BlockPool(2, log);
            List<KvCacheBlock> blocks = pool.getNewBlocks(1);
            pool.freeBlocks(blocks);
            pool.freeBlocks(blocks);
            return log.all();
        });
        SITUATIONS.put(ViolationKind.BLOCK_REFCOUNT_UNDERFLOW, SITUATIONS.get(ViolationKind.BLOCK_DOUBLE_FREE));
        SITUATIONS.put(ViolationKind.WRITE_INTO_FREED_BLOCK, () -> {
            ViolationLog log = new ViolationLog();
            KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
            kv.allocateSlots("R", 4);
            var target = kv.beginTransfer("R");
            kv.free("R");
            kv.completeWrite(target);
            return log.all();
        });
        SITUATIONS.put(ViolationKind.BLOCK_LEAK, () -> {
            ViolationLog log = new ViolationLog();
            KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), 4, log);
            kv.allocateSlots("R", 4);
            kv.checkNoLeak(List.of(), List.of());
            return log.all();
        });
        SITUATIONS.put(ViolationKind.DELAY_FREED_NEVER_RELEASED, () -> firstScheduleWith(Race.AbortedLoadLeak,
                ViolationKind.DELAY_FREED_NEVER_RELEASED));
        SITUATIONS.put(ViolationKind.LATE_TRANSFER_REPORT, () -> firstScheduleWith(Race.RecvAndSendForAbortedLoad,
                Variant.UPSTREAM_MAIN, ViolationKind.LATE_TRANSFER_REPORT));
        SITUATIONS.put(ViolationKind.DUPLICATE_TRANSFER_EVENT, () -> firstScheduleWith(Race.LateLoadCompletionUnion,
                Race.LateLoadCompletionUnion.fixes(Variant.REPORTED).with(Fix.SCHEDULER_SKIP_LATE_REPORT), ViolationKind.DUPLICATE_TRANSFER_EVENT));
        SITUATIONS.put(ViolationKind.SEND_COMPLETION_NEVER_REPORTED, () -> firstScheduleWith(Race.PushSendNeverReported,
                ViolationKind.SEND_COMPLETION_NEVER_REPORTED));
        SITUATIONS.put(ViolationKind.LEASE_EXPIRED_NOT_RELEASED, () -> firstScheduleWith(Race.LeaseReaperHeadOfLine,
                ViolationKind.LEASE_EXPIRED_NOT_RELEASED));
        SITUATIONS.put(ViolationKind.LOOKUP_LOCKS_LEAKED, () -> firstScheduleWith(Race.LookupLocksLeakOnEarlyAbort,
                ViolationKind.LOOKUP_LOCKS_LEAKED));
        SITUATIONS.put(ViolationKind.REMOTE_READ_OF_FREED_BLOCK, () -> firstScheduleWith(Race.LeaseExpiredReadAfterFree,
                ViolationKind.REMOTE_READ_OF_FREED_BLOCK));
        SITUATIONS.put(ViolationKind.ABORT_OVERTAKEN_BY_COMPLETION, () -> firstScheduleWith(Race.AbortLosesToFinalStep,
                ViolationKind.ABORT_OVERTAKEN_BY_COMPLETION));
        // #42157: an id freed between schedule() and _update_after_schedule's unchecked requests[id]
        SITUATIONS.put(ViolationKind.STORE_READ_OF_FREED_BLOCK, () -> firstScheduleWith(Race.StoreReadsPreemptedBlocks,
                ViolationKind.STORE_READ_OF_FREED_BLOCK));
        SITUATIONS.put(ViolationKind.STALE_STEP_WRITE_INTO_REUSED_BLOCK, () -> firstScheduleWith(Race.AsyncFreeUnderInFlightStep,
                ViolationKind.STALE_STEP_WRITE_INTO_REUSED_BLOCK));
        SITUATIONS.put(ViolationKind.REQUEST_STUCK, () -> firstScheduleWith(Race.SkippedWaitingAdmissionDeadlock,
                ViolationKind.REQUEST_STUCK));
        SITUATIONS.put(ViolationKind.REQUEST_LEAKED, () -> firstScheduleWith(Race.DelayFreedNeverReleased,
                ViolationKind.REQUEST_LEAKED));
        SITUATIONS.put(ViolationKind.EMPTY_KV_HANDOFF, () -> {
            // a producer (NIXL prefill side) without #50297: R is preempted with its only step in flight, then finishes
            ViolationLog log = new ViolationLog();
            KvCacheManager kv = new KvCacheManager(new BlockPool(1, log), 4, log);
            Scheduler s = new Scheduler(FixSet.all().without(Fix.REQUIRES_KV_DELIVERY), log, kv,
                    new TestAsyncConnector(kv, TestAsyncConnector.SavePolicy.ON_SUCCESS));
            s.addRequest(new Request("R", 1, 4, 1));
            SchedulerOutput step = s.schedule();
            s.preemptRequest("R");
            s.updateFromOutput(step, ModelRunnerOutput.execute(step));
            return log.all();
        });
        SITUATIONS.put(ViolationKind.OUTPUT_PLACEHOLDER_UNDERFLOW, () -> {
            // scheduler.py@00024d31 (no #48245): R is preempted with its step-1 output in flight and resumed before that
            // output returns (a pipeline deeper than 2); the resume reserves no placeholder, its output drains one anyway
            ViolationLog log = new ViolationLog();
            KvCacheManager kv = new KvCacheManager(new BlockPool(4, log), 4, log);
            Scheduler s = new Scheduler(FixSet.all().without(Fix.STALE_OUTPUT_AFTER_PREEMPT), log, kv,
                    new TestAsyncConnector(kv, TestAsyncConnector.SavePolicy.NEVER));
            s.addRequest(new Request("R", 1, 4, 3));
            SchedulerOutput first = s.schedule();
            s.preemptRequest("R");
            SchedulerOutput resume = s.schedule();
            s.updateFromOutput(first, ModelRunnerOutput.execute(first));
            s.updateFromOutput(resume, ModelRunnerOutput.execute(resume));
            return log.all();
        });
        SITUATIONS.put(ViolationKind.ENGINE_ASSERT, () -> firstScheduleWith(Race.DelayFreedIdReuse, FixSet.none(),
                ViolationKind.ENGINE_ASSERT));
    }

    private static List<Violation> quiescent(VllmInstance vllm) {
        vllm.checkQuiescence();
        return vllm.violations().all();
    }

    private static List<Violation> firstScheduleWith(Race race, ViolationKind kind) {
        return firstScheduleWith(race, Variant.REPORTED, kind);
    }

    private static List<Violation> firstScheduleWith(Race race, Variant variant, ViolationKind kind) {
        return firstScheduleWith(race, race.fixes(variant), kind);
    }

    /** The violations of the first schedule of {@code race}'s scenario under {@code fixes} that records {@code kind}. */
    private static List<Violation> firstScheduleWith(Race race, FixSet fixes, ViolationKind kind) {
        for (Schedule schedule : Schedule.all(race.scenario(fixes))) {
            RaceScenario scenario = race.scenario(fixes);
            schedule.run(scenario, false);
            if (scenario.violations().stream().anyMatch(v -> v.kind() == kind)) {
                return scenario.violations();
            }
        }
        return List.of();
    }

    @ParameterizedTest(name = "{0} [detector]: fires")
    @EnumSource(ViolationKind.class)
    void everyDetectorFiresInItsSituation(ViolationKind kind) {
        Supplier<List<Violation>> situation = SITUATIONS.get(kind);
        assertNotNull(situation, "no situation makes " + kind + " fire: add one here");
        List<Violation> seen = situation.get();
        assertTrue(seen.stream().anyMatch(v -> v.kind() == kind), kind + " did not fire; recorded: " + seen);
    }
}
