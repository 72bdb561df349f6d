package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;

/**
 * {@code _update_waiting_for_remote_kv} and what follows it: how many loaded tokens count as computed, a ready
 * request that must wait for blocks, and the quiescence and SC5 checks while a load is in flight.
 */
class SchedulerRemoteLoadTest {
    private final ViolationLog log = new ViolationLog();
    private final BlockPool pool = new BlockPool(2, log);
    private final KvCacheManager kv = new KvCacheManager(pool, 4, log);
    private final TestAsyncConnector connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
    private final Scheduler s = new Scheduler(FixSet.all(), log, kv, connector);

    private void step() {
        SchedulerOutput out = s.schedule();
        s.updateFromOutput(out, ModelRunnerOutput.execute(out, connector));
    }

    @Test
    void aWholePromptLoadedLeavesOneTokenToRun() {
        connector.remotePrefill("R", 4);
        s.addRequest(new Request("R", 1, 4, 1));
        assertEquals(Map.of(), s.schedule().numScheduledTokens(), "the load is in flight");
        connector.completeLoad("R");
        step(); // finished_recving(R)
        SchedulerOutput out = s.schedule();
        assertEquals(Map.of("R", 1), out.numScheduledTokens(), "3 of 4 prompt tokens count as computed");
        assertEquals(RequestStatus.RUNNING, s.getRequest("R").status());
        s.updateFromOutput(out, ModelRunnerOutput.execute(out, connector));
        assertEquals(Set.of("R"), s.finishedReqIds(), "R's id ships in the next step's finished_req_ids");
        s.checkQuiescence();
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void aPartialLoadCountsEveryLoadedToken() {
        connector.remotePrefill("R", 4);
        s.addRequest(new Request("R", 1, 8, 1));
        s.schedule();
        connector.completeLoad("R");
        step();
        assertEquals(Map.of("R", 4), s.schedule().numScheduledTokens(), "4 loaded, 4 left to prefill");
    }

    @Test
    void aReadyLoadThatMustWaitForBlocksIsScheduledLater() {
        connector.remotePrefill("R", 4);
        s.addRequest(new Request("R", 1, 8, 1)); // 4 tokens loaded into one block; its prefill needs a second
        s.schedule();
        s.addRequest(new Request("B", 2, 3, 2)); // takes the other block for two steps
        connector.completeLoad("R");
        step(); // B prefills; finished_recving(R)
        SchedulerOutput third = s.schedule();
        assertEquals(Set.of("B"), third.numScheduledTokens().keySet(), "no block left for R");
        assertEquals(RequestStatus.WAITING, s.getRequest("R").status(), "ready, waiting for a block");
        s.updateFromOutput(third, ModelRunnerOutput.execute(third, connector)); // B finishes, frees its block
        assertEquals(Map.of("R", 4), s.schedule().numScheduledTokens());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void blocksOfAnInFlightLoadAreNotALeak() {
        connector.remotePrefill("R", 4);
        s.addRequest(new Request("R", 1, 4, 1));
        s.schedule();
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED); // delay-freed until finished_recving
        assertEquals(List.of(), s.checkDelayFreedReleasable(), "its load will release it");
        s.checkQuiescence();
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void sc5ReturnsTheIdsItRecords() {
        Scheduler naive = new Scheduler(FixSet.all().without(Fix.DELAY_FREE_UNLESS_RECVED), log, kv, connector);
        connector.remotePrefill("R", 4);
        naive.addRequest(new Request("R", 1, 4, 1));
        naive.schedule();
        connector.completeLoad("R");
        SchedulerOutput out = naive.schedule();
        naive.updateFromOutput(out, ModelRunnerOutput.execute(out, connector));
        naive.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        assertEquals(List.of("R"), naive.checkDelayFreedReleasable());
        assertEquals(List.of(ViolationKind.DELAY_FREED_NEVER_RELEASED), log.all().stream().map(v -> v.kind()).toList());
    }
}
