package vllmrace.model.asyncio;

import java.util.ArrayList;
import java.util.List;

/**
 * The order in which atomic steps really ran, across the frontend's coroutines and the engine: the raw
 * material of a readable interleaving and of a replay. Each entry reads {@code task: Upstream.function}.
 */
public final class StepLog {
    private final List<String> entries = new ArrayList<>();

    public synchronized void record(String task, String step) {
        entries.add(task + ": " + step);
    }

    public synchronized List<String> entries() {
        return List.copyOf(entries);
    }

    /** How many steps ran so far (a scenario marks the end of its set-up with it). */
    public synchronized int size() {
        return entries.size();
    }

    /** The steps run after the first {@code from}. */
    public synchronized List<String> entriesSince(int from) {
        return List.copyOf(entries.subList(from, entries.size()));
    }

    @Override
    public synchronized String toString() {
        return String.join("\n", entries);
    }
}
