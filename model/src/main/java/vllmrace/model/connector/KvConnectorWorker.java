package vllmrace.model.connector;

import java.util.Set;

/**
 * The worker-role half of the KV-connector contract. Mirrors
 * {@code vllm/distributed/kv_transfer/kv_connector/v1/base.py}, {@code KVConnectorBase_V1.get_finished}, as
 * called once per model step by the worker (and aggregated by {@code KVOutputAggregator}; one worker here).
 */
public interface KvConnectorWorker {

    /**
     * {@code get_finished(finished_req_ids) -> (finished_sending, finished_recving)}: the async transfers that
     * completed since the last call. "The finished saves/sends req ids must belong to a set provided in a call to
     * this method (this call or a prior one)."
     *
     * @param finishedReqIds the {@code SchedulerOutput.finished_req_ids} of the step being executed
     */
    KvConnectorOutput getFinished(Set<String> finishedReqIds);
}
