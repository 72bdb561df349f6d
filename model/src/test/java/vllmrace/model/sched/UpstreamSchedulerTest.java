package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;

/**
 * vLLM's own {@code tests/v1/core/test_scheduler.py} (commit 003df296), the preemption tests the model can express, ported:
 * one method per upstream test, named after it. Upstream's default {@code create_scheduler()} is the sync {@code Scheduler};
 * blocks of 16 tokens there are blocks of 4 here (80-token prompts become 20). Not ported: the prefix-cache, chunked-prefill,
 * spec-decode and priority-policy tests.
 */
class UpstreamSchedulerTest {
    private final ViolationLog log = new ViolationLog();

    /**
     * {@code test_preempt_during_execution}: 10 usable blocks, two 5-block requests. req0 scheduled (out0), req1 added and
     * scheduled (out1) before out0 is applied ("mimics max_concurrent_batches > 1"); out1 schedules only req1 (the sync
     * Scheduler has nothing to decode for req0 until its token arrives). After out0, req0 needs a 6th block: req1 is
     * preempted. Asserts {@code len(scheduler.running) == 1}, {@code running[0] == requests[0]}, req1 PREEMPTED, and after
     * out1 "the second request (that is preempted) should be updated with the sampled token id": one output token.
     */
    @Test
    void testPreemptDuringExecution() {
        BlockPool pool = new BlockPool(10, log);
        KvCacheManager kv = new KvCacheManager(pool, 4, log);
        Scheduler s = new Scheduler(FixSet.upstreamMain(), log, kv, null, KvLoadFailurePolicy.FAIL, SchedulerKind.SCHEDULER, 2);
        Request req0 = new Request("0", 0, 20, 16);
        Request req1 = new Request("1", 1, 20, 16);
        s.addRequest(req0);
        SchedulerOutput out0 = s.schedule();
        assertEquals(1, out0.numScheduledTokens().size());
        assertEquals(5, kv.numBlocks("0"));
        s.addRequest(req1);
        SchedulerOutput out1 = s.schedule();
        assertEquals(List.of("1"), List.copyOf(out1.numScheduledTokens().keySet()));
        assertEquals(5, kv.numBlocks("1"));
        s.updateFromOutput(out0, ModelRunnerOutput.execute(out0));
        s.schedule();
        assertEquals(1, s.runningSnapshot().size());
        assertSame(req0, s.runningSnapshot().get(0));
        assertEquals(RequestStatus.PREEMPTED, req1.status());
        s.updateFromOutput(out1, ModelRunnerOutput.execute(out1));
        assertEquals(1, req1.numOutputTokens(), "the preempted request is updated with its sampled token");
        assertEquals(List.of(), log.all());
    }

    /**
     * The core of {@code test_preemption_re_records_prefix_cache_query} (its prefix-cache statistics are not modelled): a
     * request preempted by hand ({@code running.remove(request); _preempt_request(request, 0.0)}) while its step is in
     * flight is PREEMPTED; once that output is applied {@code num_stale_output_tokens == 0}, and the next
     * {@code schedule()} readmits it (RUNNING).
     */
    @Test
    void testPreemptionReRecordsPrefixCacheQuery() {
        KvCacheManager kv = new KvCacheManager(new BlockPool(10, log), 4, log);
        Scheduler s = new Scheduler(FixSet.upstreamMain(), log, kv, null, KvLoadFailurePolicy.FAIL, SchedulerKind.SCHEDULER, 1);
        Request request = new Request("0", 0, 8, 16);
        s.addRequest(request);
        SchedulerOutput out = s.schedule();
        s.preemptRequest("0");
        assertEquals(RequestStatus.PREEMPTED, request.status());
        s.updateFromOutput(out, ModelRunnerOutput.execute(out));
        assertEquals(0, request.numStaleOutputTokens());
        s.schedule();
        assertEquals(RequestStatus.RUNNING, request.status());
        assertEquals(List.of(), log.all());
    }

    /**
     * The sync Scheduler's placeholders (scheduler.py@003df296 {@code _update_after_schedule} has no
     * {@code num_output_placeholders +=}; only {@code AsyncScheduler._update_after_schedule} adds them): none at any point,
     * where the AsyncScheduler reserves one per sampling step.
     */
    @Test
    void onlyTheAsyncSchedulerReservesPlaceholders() {
        for (SchedulerKind kind : SchedulerKind.values()) {
            Scheduler s = new Scheduler(FixSet.upstreamMain(), log, null, null, KvLoadFailurePolicy.FAIL, kind,
                    kind.maxConcurrentBatchesAtPp1());
            Request request = new Request("0", 0, 4, 3);
            s.addRequest(request);
            SchedulerOutput out = s.schedule();
            assertEquals(kind.reservesPlaceholders() ? 1 : 0, request.numOutputPlaceholders(), kind.upstreamClass());
            s.updateFromOutput(out, ModelRunnerOutput.execute(out));
            assertEquals(0, request.numOutputPlaceholders(), kind.upstreamClass());
            assertEquals(1, request.numOutputTokens());
        }
        assertEquals(2, SchedulerKind.ASYNC_SCHEDULER.maxConcurrentBatchesAtPp1());
        assertEquals(1, SchedulerKind.SCHEDULER.maxConcurrentBatchesAtPp1());
        assertEquals(List.of(), log.all());
    }
}
