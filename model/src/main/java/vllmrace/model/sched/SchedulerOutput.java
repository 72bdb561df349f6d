package vllmrace.model.sched;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Mirrors {@code vllm/v1/core/sched/output.py}, {@code SchedulerOutput}: what one step runs
 * ({@code num_scheduled_tokens}) and the ids finished since the previous schedule ({@code finished_req_ids}).
 * Iteration order is the scheduling order.
 *
 * @throws IllegalArgumentException if a scheduled token count is not positive (upstream:
 *     {@code assert num_tokens_scheduled > 0} in {@code update_from_output})
 */
public record SchedulerOutput(long step, Map<String, Integer> numScheduledTokens, Set<String> finishedReqIds) {
    public SchedulerOutput {
        Objects.requireNonNull(numScheduledTokens, "numScheduledTokens");
        Objects.requireNonNull(finishedReqIds, "finishedReqIds");
        for (Map.Entry<String, Integer> e : numScheduledTokens.entrySet()) {
            Objects.requireNonNull(e.getKey(), "a scheduled request id is null");
            if (e.getValue() == null || e.getValue() <= 0) {
                throw new IllegalArgumentException("num_scheduled_tokens[" + e.getKey() + "] must be > 0, got " + e.getValue());
            }
        }
        numScheduledTokens = Collections.unmodifiableMap(new LinkedHashMap<>(numScheduledTokens));
        finishedReqIds = Collections.unmodifiableSet(new LinkedHashSet<>(finishedReqIds));
    }

    /** {@code total_num_scheduled_tokens}. */
    public int totalNumScheduledTokens() {
        return numScheduledTokens.values().stream().mapToInt(Integer::intValue).sum();
    }
}
