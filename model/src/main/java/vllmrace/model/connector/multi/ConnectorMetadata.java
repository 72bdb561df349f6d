package vllmrace.model.connector.multi;

import java.util.Map;
import java.util.Objects;

/**
 * {@code MultiKVConnectorMetadata} ({@code multi_connector.py}): what {@code build_connector_meta} ships from the
 * scheduler side to the worker side each step. {@code extraAsyncSaves} is upstream's {@code extra_async_saves};
 * {@code extraAsyncLoads} is its mirror for loads, seed 003 fix direction (1) (empty without that fix).
 */
public record ConnectorMetadata(Map<String, Integer> extraAsyncSaves, Map<String, Integer> extraAsyncLoads) {
    public static final ConnectorMetadata EMPTY = new ConnectorMetadata(Map.of(), Map.of());

    /**
     * @throws IllegalArgumentException for a count below 1 (an extra count is "additional pending transfers beyond the first")
     */
    public ConnectorMetadata {
        extraAsyncSaves = Map.copyOf(Objects.requireNonNull(extraAsyncSaves, "extraAsyncSaves"));
        extraAsyncLoads = Map.copyOf(Objects.requireNonNull(extraAsyncLoads, "extraAsyncLoads"));
        for (Map<String, Integer> m : java.util.List.of(extraAsyncSaves, extraAsyncLoads)) {
            for (Map.Entry<String, Integer> e : m.entrySet()) {
                if (e.getValue() < 1) {
                    throw new IllegalArgumentException("extra async count of " + e.getKey() + " must be >= 1, got " + e.getValue());
                }
            }
        }
    }
}
