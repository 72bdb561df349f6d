package vllmrace.model.connector;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Mirrors {@code vllm/v1/outputs.py}, {@code KVConnectorOutput}: the ids whose async save/send
 * ({@code finished_sending}) or async load ({@code finished_recving}) completed, and the blocks whose load failed
 * ({@code invalid_block_ids}), as aggregated from the workers for one step.
 */
public record KvConnectorOutput(Set<String> finishedSending, Set<String> finishedRecving, Set<Integer> invalidBlockIds) {
    public static final KvConnectorOutput EMPTY = new KvConnectorOutput(Set.of(), Set.of(), Set.of());

    public KvConnectorOutput {
        finishedSending = Set.copyOf(Objects.requireNonNull(finishedSending, "finishedSending"));
        finishedRecving = Set.copyOf(Objects.requireNonNull(finishedRecving, "finishedRecving"));
        invalidBlockIds = Set.copyOf(Objects.requireNonNull(invalidBlockIds, "invalidBlockIds"));
    }

    public boolean isEmpty() {
        return finishedSending.isEmpty() && finishedRecving.isEmpty() && invalidBlockIds.isEmpty();
    }

    /** The ids in a stable order, for readable step logs. */
    public static List<String> sorted(Set<String> ids) {
        return ids.stream().sorted().toList();
    }
}
