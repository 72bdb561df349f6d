package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.KvConnectorBaseV1;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;

/**
 * vLLM's own {@code tests/v1/core/test_deferred_block_free.py} (commit 26af9728, PR #45357), ported to the model: one
 * method per upstream test, named after it. Upstream's {@code NUM_PROMPT_TOKENS = 33  # 3 blocks with block_size=16} is 9
 * tokens in blocks of 4 here; {@code STOP_TOKEN_ID = 42} is a request whose first output token is a stop token. Upstream
 * forces {@code scheduler.defer_block_free = True}; the model computes it as {@code __init__} does ({@code
 * max_concurrent_batches > 1 and kv_transfer_config.is_kv_consumer}), so the deferring scheduler here is an
 * AsyncScheduler with a kv_consumer connector that transfers nothing. Not ported: {@code test_abort_mid_prefill_defers_free}
 * (chunked prefill) and the CoW tests (no prefix cache).
 */
class UpstreamDeferredBlockFreeTest {
    private static final int NUM_PROMPT_TOKENS = 9;
    private static final int NUM_BLOCKS = 16;
    private final ViolationLog log = new ViolationLog();
    private BlockPool pool;
    private KvCacheManager kv;

    private Scheduler scheduler(SchedulerKind kind, int maxConcurrentBatches, KvConnectorBaseV1 connector) {
        return new Scheduler(FixSet.upstreamMain(), log, kv, connector, KvLoadFailurePolicy.FAIL, kind, maxConcurrentBatches);
    }

    /** {@code _create_deferring_scheduler()}: {@code create_scheduler(async_scheduling=True)}, deferral on. */
    private Scheduler deferringScheduler() {
        newPool();
        Scheduler s = scheduler(SchedulerKind.ASYNC_SCHEDULER, 2, new TestAsyncConnector(kv, SavePolicy.NEVER));
        assertTrue(s.defersBlockFrees());
        return s;
    }

    private void newPool() {
        pool = new BlockPool(NUM_BLOCKS, log);
        kv = new KvCacheManager(pool, 4, log);
    }

    private static Request stopAtFirstToken(String id, int maxTokens) {
        return new Request(id, 0, NUM_PROMPT_TOKENS, maxTokens, 1);
    }

    private static void apply(Scheduler s, SchedulerOutput out) {
        s.updateFromOutput(out, ModelRunnerOutput.execute(out));
    }

    /**
     * {@code test_gate_disabled_without_connector}: async, no connector, so {@code assert not scheduler.defer_block_free};
     * the request stops at out0 while out1 is in flight and {@code pool.get_num_free_blocks() == num_free_initially}
     * at once, {@code assert not scheduler.deferred_frees}.
     */
    @Test
    void testGateDisabledWithoutConnector() {
        newPool();
        Scheduler s = scheduler(SchedulerKind.ASYNC_SCHEDULER, 2, null);
        assertFalse(s.defersBlockFrees());
        Request request = stopAtFirstToken("0", 5);
        s.addRequest(request);
        SchedulerOutput out0 = s.schedule();
        s.schedule();
        assertTrue(pool.numFreeBlocks() < NUM_BLOCKS);
        apply(s, out0);
        assertTrue(request.isFinished());
        assertEquals(0, s.numDeferredFrees());
        assertEquals(NUM_BLOCKS, pool.numFreeBlocks());
    }

    /**
     * The gate's other halves (scheduler.py@00f4240e {@code if multiple_inflight_batches and
     * kv_transfer_config.is_kv_consumer}): a producer connector, or one batch in flight, does not defer; the sync
     * Scheduler with pipeline parallelism (two batches in flight) and a consumer does.
     */
    @Test
    void theGateIsAConsumerWithOverlappingBatches() {
        newPool();
        assertTrue(scheduler(SchedulerKind.ASYNC_SCHEDULER, 2, new TestAsyncConnector(kv, SavePolicy.NEVER)).defersBlockFrees());
        assertTrue(scheduler(SchedulerKind.ASYNC_SCHEDULER, 2, new TestAsyncConnector(kv, SavePolicy.ALWAYS)).defersBlockFrees(),
                "kv_both is a consumer");
        assertFalse(scheduler(SchedulerKind.ASYNC_SCHEDULER, 2, new TestAsyncConnector(kv, SavePolicy.ON_SUCCESS)).defersBlockFrees(),
                "kv_producer is not a consumer");
        assertFalse(scheduler(SchedulerKind.SCHEDULER, 1, new TestAsyncConnector(kv, SavePolicy.NEVER)).defersBlockFrees(),
                "max_concurrent_batches 1: no overlapping batches");
        assertTrue(scheduler(SchedulerKind.SCHEDULER, 2, new TestAsyncConnector(kv, SavePolicy.NEVER)).defersBlockFrees(),
                "the sync Scheduler under pipeline parallelism has overlapping batches");
        assertFalse(new Scheduler(FixSet.upstreamMain().without(vllmrace.model.fix.Fix.DEFER_BLOCK_FREE), log, kv,
                new TestAsyncConnector(kv, SavePolicy.NEVER)).defersBlockFrees(), "before #45357");
    }

    /**
     * {@code test_finish_defers_free_until_inflight_step_done}: the request stops at out0 while out1 is in flight:
     * {@code len(scheduler.deferred_frees) == 1}, {@code pool.get_num_free_blocks() == num_free_running}; after out1,
     * {@code not scheduler.deferred_frees} and the pool is whole again.
     */
    @Test
    void testFinishDefersFreeUntilInflightStepDone() {
        Scheduler s = deferringScheduler();
        Request request = stopAtFirstToken("0", 5);
        s.addRequest(request);
        SchedulerOutput out0 = s.schedule();
        SchedulerOutput out1 = s.schedule();
        assertEquals(NUM_PROMPT_TOKENS, out0.numScheduledTokens().get("0"));
        assertEquals(1, out1.numScheduledTokens().get("0"));
        int numFreeRunning = pool.numFreeBlocks();
        apply(s, out0);
        assertTrue(request.isFinished());
        assertEquals(1, s.numDeferredFrees());
        assertEquals(numFreeRunning, pool.numFreeBlocks());
        apply(s, out1);
        assertEquals(0, s.numDeferredFrees());
        assertEquals(NUM_BLOCKS, pool.numFreeBlocks());
        assertEquals(List.of(), log.all());
    }

    /**
     * The fence counts steps that ran the model ({@code if scheduler_output.total_num_scheduled_tokens > 0}): an empty
     * step processed while out1 is in flight does not release the deferred free early.
     */
    @Test
    void anEmptyStepIsNotAFence() {
        Scheduler s = deferringScheduler();
        Request request = stopAtFirstToken("0", 5);
        s.addRequest(request);
        SchedulerOutput out0 = s.schedule();
        SchedulerOutput out1 = s.schedule();
        int numFreeRunning = pool.numFreeBlocks();
        apply(s, out0);
        SchedulerOutput empty = s.schedule();
        assertEquals(0, empty.totalNumScheduledTokens());
        apply(s, empty);
        assertEquals(1, s.numDeferredFrees(), "out1 may still write the blocks");
        assertEquals(numFreeRunning, pool.numFreeBlocks());
        apply(s, out1);
        assertEquals(0, s.numDeferredFrees());
        assertEquals(NUM_BLOCKS, pool.numFreeBlocks());
        assertEquals(List.of(), log.all());
    }

    /**
     * {@code test_preempt_defers_free_and_clears_bookkeeping}: preempted with two steps in flight: PREEMPTED, one deferred
     * free, the pool unchanged, the request gone from the manager's {@code req_to_blocks}; still deferred after out0;
     * returned after out1.
     */
    @Test
    void testPreemptDefersFreeAndClearsBookkeeping() {
        Scheduler s = deferringScheduler();
        Request request = stopAtFirstToken("0", 5);
        s.addRequest(request);
        SchedulerOutput out0 = s.schedule();
        SchedulerOutput out1 = s.schedule();
        int numFreeRunning = pool.numFreeBlocks();
        s.preemptRequest("0");
        assertEquals(RequestStatus.PREEMPTED, request.status());
        assertEquals(1, s.numDeferredFrees());
        assertEquals(numFreeRunning, pool.numFreeBlocks());
        assertEquals(0, kv.numBlocks("0"), "the bookkeeping is dropped at once (pop_blocks_for_free)");
        apply(s, out0);
        assertEquals(1, s.numDeferredFrees());
        apply(s, out1);
        assertEquals(0, s.numDeferredFrees());
        assertEquals(NUM_BLOCKS, pool.numFreeBlocks());
    }

    /** {@code test_finish_frees_immediately_when_no_inflight_step}: one step only: the stop frees at once. */
    @Test
    void testFinishFreesImmediatelyWhenNoInflightStep() {
        Scheduler s = deferringScheduler();
        Request request = stopAtFirstToken("0", 5);
        s.addRequest(request);
        apply(s, s.schedule());
        assertTrue(request.isFinished());
        assertEquals(0, s.numDeferredFrees());
        assertEquals(NUM_BLOCKS, pool.numFreeBlocks());
    }

    /** {@code test_abort_defers_free}: aborted with two steps in flight: held after out0, returned after out1. */
    @Test
    void testAbortDefersFree() {
        Scheduler s = deferringScheduler();
        s.addRequest(stopAtFirstToken("0", 5));
        SchedulerOutput out0 = s.schedule();
        SchedulerOutput out1 = s.schedule();
        int numFreeRunning = pool.numFreeBlocks();
        s.finishRequests(List.of("0"), RequestStatus.FINISHED_ABORTED);
        assertEquals(1, s.numDeferredFrees());
        assertEquals(numFreeRunning, pool.numFreeBlocks());
        apply(s, out0);
        assertEquals(1, s.numDeferredFrees());
        assertEquals(numFreeRunning, pool.numFreeBlocks());
        apply(s, out1);
        assertEquals(0, s.numDeferredFrees());
        assertEquals(NUM_BLOCKS, pool.numFreeBlocks());
    }

    /** {@code test_multiple_deferred_frees_drain_in_order}: two requests stop at out0: two deferred frees, both drained by out1. */
    @Test
    void testMultipleDeferredFreesDrainInOrder() {
        Scheduler s = deferringScheduler();
        s.addRequest(stopAtFirstToken("0", 5));
        s.addRequest(stopAtFirstToken("1", 5));
        SchedulerOutput out0 = s.schedule();
        SchedulerOutput out1 = s.schedule();
        apply(s, out0);
        assertEquals(2, s.numDeferredFrees());
        assertTrue(pool.numFreeBlocks() < NUM_BLOCKS);
        apply(s, out1);
        assertEquals(0, s.numDeferredFrees());
        assertEquals(NUM_BLOCKS, pool.numFreeBlocks());
    }

    /**
     * {@code test_max_tokens_finish_frees_immediately_with_other_inflight}: "short" (max_tokens 1) and "long" (100): out1
     * skips short (its in-flight step reaches max_tokens) and decodes long; after out0 short is finished and, as no
     * in-flight step scheduled it, its blocks return at once although a step is still in flight.
     */
    @Test
    void testMaxTokensFinishFreesImmediatelyWithOtherInflight() {
        Scheduler s = deferringScheduler();
        s.addRequest(new Request("short", 0, NUM_PROMPT_TOKENS, 1));
        s.addRequest(new Request("long", 1, NUM_PROMPT_TOKENS, 100));
        SchedulerOutput out0 = s.schedule();
        SchedulerOutput out1 = s.schedule();
        assertFalse(out1.numScheduledTokens().containsKey("short"));
        assertTrue(out1.numScheduledTokens().containsKey("long"));
        int freeBefore = pool.numFreeBlocks();
        apply(s, out0);
        assertTrue(s.getRequest("short") == null, "short finished and was freed");
        assertEquals(0, s.numDeferredFrees());
        assertTrue(pool.numFreeBlocks() > freeBefore, "short's blocks returned");
    }

    /**
     * {@code test_non_async_abort_defers_via_last_sched_seq}: the sync Scheduler with deferral on (here: pipeline
     * parallelism, two batches in flight, and a consumer), one step scheduled, aborted before its output:
     * {@code num_output_placeholders == 0}, one deferred free, returned by that step's {@code update_from_output}.
     */
    @Test
    void testNonAsyncAbortDefersViaLastSchedSeq() {
        newPool();
        Scheduler s = scheduler(SchedulerKind.SCHEDULER, 2, new TestAsyncConnector(kv, SavePolicy.NEVER));
        assertTrue(s.defersBlockFrees());
        Request request = stopAtFirstToken("0", 5);
        s.addRequest(request);
        SchedulerOutput out0 = s.schedule();
        assertEquals(0, request.numOutputPlaceholders());
        int numFreeRunning = pool.numFreeBlocks();
        s.finishRequests(List.of("0"), RequestStatus.FINISHED_ABORTED);
        assertEquals(1, s.numDeferredFrees());
        assertEquals(numFreeRunning, pool.numFreeBlocks());
        apply(s, out0);
        assertEquals(0, s.numDeferredFrees());
        assertEquals(NUM_BLOCKS, pool.numFreeBlocks());
    }

    /**
     * Not an upstream test: the fence is the newest dispatched step ({@code self.deferred_frees.append((self.sched_step_seq,
     * blocks))}), not the request's own last one. "short" (max_tokens 1) is in out0 only, "long" in out0 and out1; short
     * is aborted with both in flight: its blocks wait for out1, though out0 (its own last step) is processed first. A
     * fence at the request's last step, or a drain one step late, fails here.
     */
    @Test
    void theFenceIsTheNewestDispatchedStepNotTheRequestsOwn() {
        Scheduler s = deferringScheduler();
        s.addRequest(new Request("short", 0, NUM_PROMPT_TOKENS, 1));
        s.addRequest(new Request("long", 1, NUM_PROMPT_TOKENS, 100));
        SchedulerOutput out0 = s.schedule();
        SchedulerOutput out1 = s.schedule();
        assertFalse(out1.numScheduledTokens().containsKey("short"));
        int running = pool.numFreeBlocks();
        s.finishRequests(List.of("short"), RequestStatus.FINISHED_ABORTED);
        assertEquals(1, s.numDeferredFrees(), "out0 scheduled short and is unprocessed: deferred");
        apply(s, out0);
        assertEquals(1, s.numDeferredFrees(), "fenced behind out1, the newest step when it was freed");
        assertEquals(running, pool.numFreeBlocks());
        apply(s, out1);
        assertEquals(0, s.numDeferredFrees(), "out1 processed: drained in that very update_from_output");
        assertEquals(running + 3, pool.numFreeBlocks(), "short's 3 blocks (9 prompt tokens and its one placeholder)");
    }
}
