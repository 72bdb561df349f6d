package vllmrace.model.connector;

import java.util.List;
import vllmrace.model.sched.Request;

/**
 * The scheduler-role half of the KV-connector contract. Mirrors
 * {@code vllm/distributed/kv_transfer/kv_connector/v1/base.py} (commit 13f4ad0f), {@code KVConnectorBase_V1}:
 * {@code get_num_new_matched_tokens}, {@code update_state_after_alloc}, {@code request_finished} and
 * {@code update_connector_output}. Called only from the {@code Scheduler}, i.e. on the EngineCore busy loop.
 */
public interface KvConnectorBaseV1 {

    /**
     * {@code get_num_new_matched_tokens(request, num_computed_tokens)}: how many tokens beyond the local prefix
     * the connector can supply, and whether it loads them asynchronously. "Might be called multiple times for a
     * given request and should be side-effect free."
     */
    MatchedTokens getNumNewMatchedTokens(Request request, int numComputedTokens);

    /**
     * {@code update_state_after_alloc(request, blocks, num_external_tokens)}: the scheduler allocated
     * {@code blockIds} for the request; a connector that reported an async load starts it into those blocks.
     */
    void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens);

    /**
     * {@code request_finished(request, block_ids) -> (delay_free_blocks, kv_transfer_params)}. Contract: "Called
     * exactly once when a request has finished, before its blocks are freed." Returning {@code delayFreeBlocks}
     * means the blocks are being saved/sent asynchronously and must not be freed until the id comes back in
     * {@code finished_sending}.
     */
    RequestFinishedResult requestFinished(Request request, List<Integer> blockIds);

    /**
     * {@code build_connector_meta(scheduler_output)}: the step's metadata for the workers, built at the end of
     * {@code schedule()}; a connector that stores the KV of running requests emits its store jobs here. Default: nothing.
     */
    default void buildConnectorMeta(vllmrace.model.sched.SchedulerOutput schedulerOutput) {
    }

    /** {@code update_connector_output(kv_connector_output)}: the workers' aggregated report of this step. */
    void updateConnectorOutput(KvConnectorOutput kvConnectorOutput);

    /**
     * The connector's {@code kv_transfer_config.kv_role} ({@code self._kv_transfer_config}: for a MultiConnector's child,
     * the child's own entry).
     */
    KvRole kvRole();

    /**
     * {@code KVConnectorBase_V1.requires_kv_delivery} (#50297; base.py@00f4240e): "Whether this connector hands off KV
     * that must be reliably delivered. ... Defaults to the producer role, since only a producer hands KV off when a
     * request completes. Best-effort caches return False": {@code return self._kv_transfer_config.is_kv_producer}, so a
     * {@code kv_both} connector requires delivery unless it overrides this. Read by the scheduler only with
     * {@code Fix.REQUIRES_KV_DELIVERY}.
     */
    default boolean requiresKvDelivery() {
        vllmrace.model.upstream.UpstreamPins.enter(vllmrace.model.upstream.UpstreamPin.KV_CONNECTOR_BASE_REQUIRES_KV_DELIVERY);
        return kvRole().isKvProducer();
    }

    /**
     * The scheduler's {@code kv_transfer_config.is_kv_consumer} (scheduler.py@00f4240e, {@code Scheduler.__init__}): the
     * connector fills blocks from elsewhere ({@code kv_consumer} or {@code kv_both}), so with overlapping batches a load
     * may write a block an in-flight step still writes; #45357 defers block frees only then. The scheduler reads the
     * top-level config, so for a MultiConnector this is its own role, not its children's.
     */
    default boolean isKvConsumer() {
        return kvRole().isKvConsumer();
    }
}
