package vllmrace.model.connector.multi;

import vllmrace.model.kv.TransferTarget;

/** One async load/pull or save of a child connector: its blocks snapshot, and whether it completed. */
final class AsyncTransfer {
    final String requestId;
    final TransferTarget target;
    boolean done;
    /** NIXL decode side with seed 003 (2): the pull's blocks are pinned and its completion is reported as a send. */
    boolean pinned;
    /** A failed load: it wrote nothing, and its blocks are reported in {@code invalid_block_ids}. */
    boolean failed;

    AsyncTransfer(String requestId, TransferTarget target) {
        this.requestId = requestId;
        this.target = target;
    }
}
