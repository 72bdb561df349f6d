package vllmrace.model.connector.multi;

import vllmrace.model.connector.KvConnectorBaseV1;
import vllmrace.model.connector.KvConnectorWorker;
import vllmrace.model.connector.PendingTransfers;

/**
 * A sub-connector of {@link MultiConnector}: both roles of {@code KVConnectorBase_V1}
 * ({@code vllm/distributed/kv_transfer/kv_connector/v1/base.py}) in one object, plus the detector view of what it
 * still owes. Upstream the two roles are separate objects that talk through connector metadata; the model shares state.
 */
public interface ChildConnector extends KvConnectorBaseV1, KvConnectorWorker, PendingTransfers {
    /** The connector's config name ({@code kv_connector}), for step logs. */
    String name();

    /** True while an async load of {@code requestId} by this child is in flight or completed but not yet reported. */
    boolean hasUnreportedLoad(String requestId);

    /** The environment: every transfer of this child still in flight completes now. Returns how many did. */
    int finishInFlightTransfers();

    /** Nothing in flight, unreported or held by this child. */
    boolean isIdle();

    /** What another busy-loop iteration could still change in this child (a running timer is progress). */
    default String progressSignature() {
        return name() + " idle " + isIdle();
    }
}
