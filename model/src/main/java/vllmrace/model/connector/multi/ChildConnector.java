package vllmrace.model.connector.multi;

import java.util.Set;
import vllmrace.model.connector.KvConnectorBaseV1;
import vllmrace.model.connector.KvConnectorOutput;
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

    /**
     * {@code get_finished_count()}: how many workers report each of this child's transfers, or null for the world size
     * (the base's default, {@code KVConnectorBase_V1.get_finished_count}).
     */
    default Integer getFinishedCount() {
        return null;
    }

    /**
     * This child's worker on prefill-context-parallel rank {@code rank}, one poll ({@code get_finished}); rank 0 is
     * {@link #getFinished}. A child that models no worker beyond rank 0 refuses the others.
     *
     * @throws UnsupportedOperationException for a rank above 0 of a child that models only rank 0 (nothing changes)
     */
    default KvConnectorOutput getFinishedOnRank(int rank, Set<String> finishedReqIds) {
        if (rank == 0) {
            return getFinished(finishedReqIds);
        }
        throw new UnsupportedOperationException(name() + " models no worker on PCP rank " + rank);
    }
}
