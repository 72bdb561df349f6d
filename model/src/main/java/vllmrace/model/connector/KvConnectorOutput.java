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

    /**
     * Each set is copied in sorted order: {@code Set.copyOf} iterates in an order salted per JVM, which made a step log
     * naming two ids differ between runs (a saved replay no longer matching in a fresh JVM).
     */
    public KvConnectorOutput {
        finishedSending = sortedCopy(Objects.requireNonNull(finishedSending, "finishedSending"));
        finishedRecving = sortedCopy(Objects.requireNonNull(finishedRecving, "finishedRecving"));
        invalidBlockIds = sortedCopy(Objects.requireNonNull(invalidBlockIds, "invalidBlockIds"));
    }

    private static <T extends Comparable<T>> Set<T> sortedCopy(Set<T> set) {
        set.forEach(e -> Objects.requireNonNull(e, "a null id"));
        return java.util.Collections.unmodifiableSet(new java.util.TreeSet<>(set));
    }

    public boolean isEmpty() {
        return finishedSending.isEmpty() && finishedRecving.isEmpty() && invalidBlockIds.isEmpty();
    }

    /** The ids in a stable order, for readable step logs. */
    public static List<String> sorted(Set<String> ids) {
        return ids.stream().sorted().toList();
    }
}
