package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.FixSet;

/**
 * vLLM's own {@code tests/v1/core/test_async_scheduler.py} (commit 014b2350), ported to the model: one method per upstream
 * test, named after it. Upstream's {@code create_scheduler(async_scheduling=True)} is the model's AsyncScheduler without KV
 * accounting (upstream gives it 10000 blocks, so no test here allocates); prompts of 10 tokens; every scheduled request
 * samples one token. {@code test_preempt} is byte-identical to {@code test_abort} upstream and is not ported twice.
 */
class UpstreamAsyncSchedulerTest {
    private static final int NUM_PROMPT_TOKENS = 10;
    private final ViolationLog log = new ViolationLog();

    private Scheduler scheduler(SchedulerKind kind) {
        return new Scheduler(FixSet.upstreamMain(), log, null, null, KvLoadFailurePolicy.FAIL, kind, 2);
    }

    /**
     * {@code test_stop_by_max_tokens(max_tokens)}: req0 is added and scheduled, then req1, before any output; outputs are
     * applied oldest first and a new step scheduled after each. Asserts: {@code get_num_unfinished_requests() == 0}, each
     * {@code num_output_tokens == max_tokens}, and {@code total_num_scheduled_tokens == expected} where each request adds
     * {@code num_prompt_tokens + max_tokens - 1} ("we aren't scheduling more tokens than necessary": the AsyncScheduler's
     * "{@code num_output_placeholders > 0 and ...}" skip of a request whose in-flight step already reaches max_tokens).
     */
    @ParameterizedTest(name = "max_tokens={0}")
    @ValueSource(ints = {1, 2, 3, 5})
    void testStopByMaxTokens(int maxTokens) {
        Scheduler s = scheduler(SchedulerKind.ASYNC_SCHEDULER);
        Request req0 = new Request("0", 0, NUM_PROMPT_TOKENS, maxTokens);
        Request req1 = new Request("1", 1, NUM_PROMPT_TOKENS, maxTokens);
        Deque<SchedulerOutput> outputs = new ArrayDeque<>();
        s.addRequest(req0);
        outputs.add(s.schedule());
        s.addRequest(req1);
        outputs.add(s.schedule());
        int total = runToEnd(s, outputs);
        assertEquals(0, s.requestsSnapshot().stream().filter(r -> !r.isFinished()).count());
        assertEquals(maxTokens, req0.numOutputTokens());
        assertEquals(maxTokens, req1.numOutputTokens());
        assertEquals(2 * (NUM_PROMPT_TOKENS + maxTokens - 1), total);
        assertEquals(List.of(), log.all());
    }

    /**
     * The sync Scheduler's side of the same test (no upstream counterpart: upstream's sync path has no placeholders to
     * skip with): one step at a time, the same totals, and never a placeholder.
     */
    @ParameterizedTest(name = "max_tokens={0}")
    @ValueSource(ints = {1, 2, 3, 5})
    void testStopByMaxTokensWithTheSyncScheduler(int maxTokens) {
        Scheduler s = scheduler(SchedulerKind.SCHEDULER);
        Request req0 = new Request("0", 0, NUM_PROMPT_TOKENS, maxTokens);
        Request req1 = new Request("1", 1, NUM_PROMPT_TOKENS, maxTokens);
        s.addRequest(req0);
        s.addRequest(req1);
        int total = 0;
        while (s.hasRequests()) {
            SchedulerOutput out = s.schedule();
            assertEquals(0, req0.numOutputPlaceholders() + req1.numOutputPlaceholders(), "the sync Scheduler reserves none");
            total += out.totalNumScheduledTokens();
            s.updateFromOutput(out, ModelRunnerOutput.execute(out));
        }
        assertEquals(maxTokens, req0.numOutputTokens());
        assertEquals(maxTokens, req1.numOutputTokens());
        assertEquals(2 * (NUM_PROMPT_TOKENS + maxTokens - 1), total);
        assertEquals(List.of(), log.all());
    }

    /**
     * {@code test_abort}: 10 requests (max_tokens 20) scheduled twice before any output; then, per iteration, the next of
     * {@code abort_order = [0, 8, 3, 1, 6, 4, 2, 5, 7, 9]} is aborted ({@code finish_requests(..., FINISHED_ABORTED)}),
     * the oldest output applied and a new step scheduled. Asserts: every request FINISHED_ABORTED with
     * {@code num_output_tokens == abort_order_copy.index(i)} (an aborted request's in-flight output is dropped:
     * {@code if request is None or request.is_finished(): continue}, #33377).
     */
    @Test
    void testAbort() {
        Scheduler s = scheduler(SchedulerKind.ASYNC_SCHEDULER);
        List<Request> requests = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Request r = new Request(String.valueOf(i), i, NUM_PROMPT_TOKENS, 20);
            requests.add(r);
            s.addRequest(r);
        }
        Deque<SchedulerOutput> outputs = new ArrayDeque<>();
        outputs.add(s.schedule());
        outputs.add(s.schedule());
        List<Integer> abortOrder = List.of(0, 8, 3, 1, 6, 4, 2, 5, 7, 9);
        for (int id : abortOrder) {
            s.finishRequests(List.of(String.valueOf(id)), RequestStatus.FINISHED_ABORTED);
            SchedulerOutput oldest = outputs.pollFirst();
            if (oldest != null) {
                s.updateFromOutput(oldest, ModelRunnerOutput.execute(oldest));
            }
            SchedulerOutput next = s.schedule();
            if (next.totalNumScheduledTokens() > 0) {
                outputs.add(next);
            }
        }
        for (int i = 0; i < requests.size(); i++) {
            assertEquals(RequestStatus.FINISHED_ABORTED, requests.get(i).status());
            assertEquals(abortOrder.indexOf(i), requests.get(i).numOutputTokens(), "request " + i);
        }
        assertEquals(List.of(), log.all());
    }

    /** Applies the oldest step's output and schedules the next until nothing is in flight; the tokens scheduled in all. */
    private static int runToEnd(Scheduler s, Deque<SchedulerOutput> outputs) {
        int total = outputs.stream().mapToInt(SchedulerOutput::totalNumScheduledTokens).sum();
        while (!outputs.isEmpty()) {
            SchedulerOutput oldest = outputs.pollFirst();
            s.updateFromOutput(oldest, ModelRunnerOutput.execute(oldest));
            SchedulerOutput next = s.schedule();
            if (next.totalNumScheduledTokens() > 0) {
                outputs.add(next);
                total += next.totalNumScheduledTokens();
            }
        }
        return total;
    }
}
