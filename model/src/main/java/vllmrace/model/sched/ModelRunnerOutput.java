package vllmrace.model.sched;

import java.util.List;

/**
 * Mirrors {@code vllm/v1/outputs.py}, {@code ModelRunnerOutput}: the ids that sampled one token in a step.
 * The model samples no real tokens; a request finishes by length ({@code max_tokens}).
 */
public record ModelRunnerOutput(List<String> reqIds) {
    public ModelRunnerOutput {
        reqIds = List.copyOf(reqIds);
    }

    /** The worker's output for a scheduled step: every scheduled request samples one token. */
    public static ModelRunnerOutput execute(SchedulerOutput out) {
        return new ModelRunnerOutput(List.copyOf(out.numScheduledTokens().keySet()));
    }
}
