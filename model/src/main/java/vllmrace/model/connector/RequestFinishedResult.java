package vllmrace.model.connector;

import java.util.Map;

/** What {@code request_finished} returns: {@code (delay_free_blocks, kv_transfer_params)}; params may be null. */
public record RequestFinishedResult(boolean delayFreeBlocks, Map<String, Object> kvTransferParams) {
    public static final RequestFinishedResult FREE_NOW = new RequestFinishedResult(false, null);

    public RequestFinishedResult {
        kvTransferParams = kvTransferParams == null ? null : Map.copyOf(kvTransferParams);
    }
}
