package vllmrace.model.connector;

/**
 * {@code KVTransferConfig.kv_role} ({@code vllm/config/kv_transfer.py}, commit 9dc49464): {@code KVProducer =
 * Literal["kv_producer", "kv_both"]}, {@code KVConsumer = Literal["kv_consumer", "kv_both"]}, so {@code kv_both} is both
 * a producer and a consumer. A connector without a role is refused upstream ("Please specify kv_role when kv_connector
 * is set"); the model's connectors always have one. Each child of a MultiConnector has its own
 * ({@code KVTransferConfig(**ktc, engine_id=engine_id)}: only {@code engine_id} comes from the parent).
 */
public enum KvRole {
    KV_PRODUCER("kv_producer"),
    KV_CONSUMER("kv_consumer"),
    KV_BOTH("kv_both");

    private final String configValue;

    KvRole(String configValue) {
        this.configValue = configValue;
    }

    /** {@code is_kv_producer}: {@code self.kv_connector is not None and self.kv_role in get_args(KVProducer)}. */
    public boolean isKvProducer() {
        vllmrace.model.upstream.UpstreamPins.enter(vllmrace.model.upstream.UpstreamPin.KV_TRANSFER_CONFIG_IS_KV_PRODUCER);
        return this == KV_PRODUCER || this == KV_BOTH;
    }

    /** {@code is_kv_consumer}: {@code self.kv_connector is not None and self.kv_role in get_args(KVConsumer)}. */
    public boolean isKvConsumer() {
        vllmrace.model.upstream.UpstreamPins.enter(vllmrace.model.upstream.UpstreamPin.KV_TRANSFER_CONFIG_IS_KV_CONSUMER);
        return this == KV_CONSUMER || this == KV_BOTH;
    }

    /** The value as written in {@code --kv-transfer-config}. */
    public String configValue() {
        return configValue;
    }

    @Override
    public String toString() {
        return configValue;
    }
}
