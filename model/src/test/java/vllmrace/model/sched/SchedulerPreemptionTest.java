package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;

/**
 * Preemption ({@code Scheduler._preempt_request}, scheduler.py@00024d31) in {@code schedule()}'s running loop and through
 * the harness operation {@link Scheduler#preemptRequest(String)}, which refuses what upstream's assert would, changing
 * nothing.
 */
class SchedulerPreemptionTest {
    private final ViolationLog log = new ViolationLog();
    private BlockPool pool;
    private KvCacheManager kv;
    private TestAsyncConnector connector;

    private Scheduler scheduler(int blocks) {
        pool = new BlockPool(blocks, log);
        kv = new KvCacheManager(pool, 4, log);
        connector = new TestAsyncConnector(kv, SavePolicy.NEVER);
        // a KV consumer with #45357 defers a preempted request's free behind its in-flight step; these tests show the
        // preemption itself, as at 00024d31 (the deferral has its own tests)
        return new Scheduler(FixSet.all().without(vllmrace.model.fix.Fix.DEFER_BLOCK_FREE), log, kv, connector);
    }

    @Test
    void aRunningRequestThatCannotGrowPreemptsTheTailOfRunning() {
        Scheduler s = scheduler(2);
        s.addRequest(new Request("A", 1, 4, 3));
        s.addRequest(new Request("R", 2, 4, 3));
        SchedulerOutput first = s.schedule(); // A and R: one block each, the pool is full
        assertEquals(0, pool.numFreeBlocks());
        s.addRequest(new Request("W", 3, 4, 1)); // waiting: not admitted in a step that preempted
        SchedulerOutput second = s.schedule(); // A's decode needs a second block: running.pop() = R
        Request r = s.getRequest("R");
        assertEquals(RequestStatus.PREEMPTED, r.status());
        assertEquals(0, r.numComputedTokens(), "recomputed from scratch");
        assertEquals(1, r.numPreemptions());
        assertEquals(0, kv.numBlocks("R"), "kv_cache_manager.free: R's block went back to the pool and A took it");
        assertEquals(2, kv.numBlocks("A"));
        assertEquals(List.of("A"), second.numScheduledTokens().keySet().stream().toList());
        assertEquals(List.of(r, s.getRequest("W")), s.waitingSnapshot(), "R at the front of waiting; W not admitted");
        assertEquals(0, connector.requestFinishedCalls("R"), "no connector call for a preemption");
        assertTrue(log.isEmpty(), log.toString());
        s.updateFromOutput(first, ModelRunnerOutput.execute(first));
        s.updateFromOutput(second, ModelRunnerOutput.execute(second));
        assertEquals(RequestStatus.PREEMPTED, r.status(), "R's step-1 token was delivered, it waits to resume");
    }

    @Test
    void aRequestThatIsItsOwnVictimEndsTheRunningLoopAndResumesLater() {
        Scheduler s = scheduler(1);
        s.addRequest(new Request("R", 1, 4, 2));
        SchedulerOutput first = s.schedule();
        s.updateFromOutput(first, ModelRunnerOutput.execute(first)); // R: 1 token, its decode needs a second block
        SchedulerOutput second = s.schedule();
        assertEquals(RequestStatus.PREEMPTED, s.getRequest("R").status(), "no other victim: R preempts itself");
        assertTrue(second.numScheduledTokens().isEmpty());
        assertEquals(1, pool.numFreeBlocks());
        SchedulerOutput third = s.schedule(); // resumes: prompt and its one output token, 5 tokens, 2 blocks: not enough
        assertTrue(third.numScheduledTokens().isEmpty(), "a waiting request that cannot be allocated waits");
        assertEquals(RequestStatus.PREEMPTED, s.getRequest("R").status());
    }

    @Test
    void aPreemptedRequestIsReadmittedAndRecomputesPromptAndDeliveredOutput() {
        Scheduler s = scheduler(4);
        Request r = new Request("R", 1, 4, 3);
        s.addRequest(r);
        SchedulerOutput first = s.schedule();
        s.updateFromOutput(first, ModelRunnerOutput.execute(first));
        s.preemptRequest("R");
        SchedulerOutput resume = s.schedule();
        assertEquals(5, resume.numScheduledTokens().get("R"), "num_tokens - 0: the prompt and the delivered token");
        assertEquals(RequestStatus.RUNNING, s.getRequest("R").status());
        s.updateFromOutput(resume, ModelRunnerOutput.execute(resume));
        SchedulerOutput last = s.schedule();
        s.updateFromOutput(last, ModelRunnerOutput.execute(last));
        assertEquals(RequestStatus.FINISHED_LENGTH_CAPPED, r.status());
        assertEquals(3, r.numOutputTokens(), "no token lost or duplicated");
        assertEquals(0, r.numOutputPlaceholders());
        assertTrue(log.isEmpty(), log.toString());
        assertEquals(0, pool.numUsedBlocks());
    }

    @Test
    void preemptingAnUnknownIdThrowsAndChangesNothing() {
        Scheduler s = scheduler(2);
        s.addRequest(new Request("R", 1, 4, 2));
        s.schedule();
        String before = s.progressSignature();
        NotPreemptableException e = assertThrows(NotPreemptableException.class, () -> s.preemptRequest("X"));
        assertEquals("X", e.requestId());
        assertTrue(e.getMessage().contains("holds no request X"), e.getMessage());
        assertEquals(before, s.progressSignature());
        assertTrue(log.isEmpty(), log.toString());
        assertThrows(NullPointerException.class, () -> s.preemptRequest(null));
        assertEquals(before, s.progressSignature());
    }

    @Test
    void preemptingAWaitingOrPreemptedRequestThrowsAndChangesNothing() {
        Scheduler s = scheduler(2);
        s.addRequest(new Request("R", 1, 4, 2));
        String before = s.progressSignature();
        NotPreemptableException e = assertThrows(NotPreemptableException.class, () -> s.preemptRequest("R"));
        assertTrue(e.getMessage().contains("only running requests can be preempted"), e.getMessage());
        assertEquals(before, s.progressSignature());
        s.schedule();
        s.preemptRequest("R");
        String preempted = s.progressSignature();
        assertThrows(NotPreemptableException.class, () -> s.preemptRequest("R"), "PREEMPTED is not RUNNING");
        assertEquals(preempted, s.progressSignature());
        assertEquals(1, s.getRequest("R").numPreemptions());
        assertTrue(log.isEmpty(), log.toString());
    }

    @Test
    void preemptingAFinishedRequestThrowsAndChangesNothing() {
        pool = new BlockPool(2, log);
        kv = new KvCacheManager(pool, 4, log);
        connector = new TestAsyncConnector(kv, SavePolicy.ALWAYS); // a finished request stays, delay-freed
        Scheduler s = new Scheduler(FixSet.all(), log, kv, connector);
        s.addRequest(new Request("R", 1, 4, 1));
        SchedulerOutput out = s.schedule();
        s.updateFromOutput(out, ModelRunnerOutput.execute(out));
        Request r = s.getRequest("R");
        assertSame(RequestStatus.FINISHED_LENGTH_CAPPED, r.status());
        String before = s.progressSignature();
        assertThrows(NotPreemptableException.class, () -> s.preemptRequest("R"));
        assertEquals(before, s.progressSignature());
        assertEquals(1, kv.numBlocks("R"), "its blocks stay with the pending save");
        assertFalse(s.waitingSnapshot().contains(r));
        assertTrue(log.isEmpty(), log.toString());
    }

    /**
     * #35781's two queues: a preempted request goes to the front of {@code waiting} ({@code prepend_request}), which is
     * scanned after {@code skipped_waiting}; so it lands behind a request skipped for its remote KVs, and a request
     * popped from skipped_waiting is no longer marked (a later preemption of it lands at the front again). A preempted
     * request put ahead of the skipped ones, or a mark that outlives the pop, fails here.
     */
    @Test
    void aPreemptedRequestGoesBehindSkippedWaitingAndAPoppedOneIsUnmarked() {
        Scheduler s = scheduler(16);
        s.addRequest(new Request("P", 1, 4, 12));
        step(s); // P runs
        connector.remotePrefill("S", 4);
        s.addRequest(new Request("S", 2, 4, 12));
        s.addRequest(new Request("W", 3, 4, 12));
        s.preemptRequest("P");
        assertEquals(List.of("P", "S", "W"), ids(s.waitingSnapshot()), "no request skipped yet: P at the very front");
        step(s); // P and W run; S waits for its KVs, skipped
        assertEquals(List.of("S"), ids(s.waitingSnapshot()));
        s.preemptRequest("P");
        assertEquals(List.of("S", "P"), ids(s.waitingSnapshot()), "behind skipped_waiting, at the front of waiting");
        connector.completeLoad("S");
        step(s); // finished_recving(S): ready
        SchedulerOutput next = step(s); // S popped from skipped_waiting and scheduled
        assertTrue(next.numScheduledTokens().containsKey("S"), next.numScheduledTokens().toString());
        s.preemptRequest("S");
        s.preemptRequest("W");
        assertEquals("W", ids(s.waitingSnapshot()).get(0), "S is no longer marked skipped: W, preempted last, goes in front of it");
        assertTrue(log.isEmpty(), log.toString());
    }

    private SchedulerOutput step(Scheduler s) {
        SchedulerOutput out = s.schedule();
        s.updateFromOutput(out, ModelRunnerOutput.execute(out, connector));
        return out;
    }

    private static List<String> ids(List<Request> requests) {
        return requests.stream().map(Request::requestId).toList();
    }
}
