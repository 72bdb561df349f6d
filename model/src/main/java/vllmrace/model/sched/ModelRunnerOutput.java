package vllmrace.model.sched;

import java.util.List;
import java.util.Objects;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.KvConnectorWorker;

/**
 * Mirrors {@code vllm/v1/outputs.py}, {@code ModelRunnerOutput}: the ids that sampled one token in a step, and
 * the step's {@code kv_connector_output}. The model samples no real tokens; a request finishes by length
 * ({@code max_tokens}).
 */
public record ModelRunnerOutput(List<String> reqIds, KvConnectorOutput kvConnectorOutput) {
    public ModelRunnerOutput {
        reqIds = List.copyOf(reqIds);
        kvConnectorOutput = Objects.requireNonNull(kvConnectorOutput, "kvConnectorOutput");
    }

    public ModelRunnerOutput(List<String> reqIds) {
        this(reqIds, KvConnectorOutput.EMPTY);
    }

    /** The worker's output for a scheduled step, without a KV connector: every scheduled request samples one token. */
    public static ModelRunnerOutput execute(SchedulerOutput out) {
        return new ModelRunnerOutput(List.copyOf(out.numScheduledTokens().keySet()));
    }

    /**
     * {@code Worker.execute_model}: every scheduled request samples one token, and the worker's connector reports
     * the transfers finished by the end of the step ({@code get_finished(scheduler_output.finished_req_ids)}).
     */
    public static ModelRunnerOutput execute(SchedulerOutput out, KvConnectorWorker connector) {
        KvConnectorOutput kv = connector == null ? KvConnectorOutput.EMPTY : connector.getFinished(out.finishedReqIds());
        return new ModelRunnerOutput(List.copyOf(out.numScheduledTokens().keySet()), kv);
    }
}
