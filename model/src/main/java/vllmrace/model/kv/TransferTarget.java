package vllmrace.model.kv;

import java.util.List;

/**
 * Detector only, no upstream class: the blocks an asynchronous KV transfer (a connector's async load, a NIXL pull)
 * will write, snapshotted by {@link KvCacheManager#beginTransfer} together with each block's generation. Upstream
 * passes plain block ids to the worker; the write lands later, whether or not the request still owns the blocks.
 * Immutable.
 */
public final class TransferTarget {
    /** One snapshotted block and the generation it had when the transfer began. */
    public record Slot(KvCacheBlock block, int generation) {
    }

    private final String requestId;
    private final List<Slot> slots;

    TransferTarget(String requestId, List<Slot> slots) {
        this.requestId = requestId;
        this.slots = List.copyOf(slots);
    }

    public String requestId() {
        return requestId;
    }

    public List<Slot> slots() {
        return slots;
    }

    /** The snapshotted blocks, e.g. for a connector to pin with {@link BlockPool#touch}. */
    public List<KvCacheBlock> blocks() {
        return slots.stream().map(Slot::block).toList();
    }

    public List<Integer> blockIds() {
        return slots.stream().map(s -> s.block().blockId()).toList();
    }

    @Override
    public String toString() {
        return "TransferTarget[" + requestId + ", blocks=" + blockIds() + "]";
    }
}
