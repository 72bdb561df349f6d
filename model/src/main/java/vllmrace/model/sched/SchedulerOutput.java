package vllmrace.model.sched;

import java.util.Map;
import java.util.Set;

/**
 * Mirrors {@code vllm/v1/core/sched/output.py}, {@code SchedulerOutput}: what one step runs
 * ({@code num_scheduled_tokens}) and the ids finished since the previous schedule ({@code finished_req_ids}).
 */
public record SchedulerOutput(long step, Map<String, Integer> numScheduledTokens, Set<String> finishedReqIds) {
    public SchedulerOutput {
        numScheduledTokens = Map.copyOf(numScheduledTokens);
        finishedReqIds = Set.copyOf(finishedReqIds);
    }
}
