package vllmrace.model.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One direction of the ZMQ socket pair between AsyncMPClient and EngineCoreProc: messages from one client
 * arrive in the order they were sent. Thread-safe.
 */
public final class Fifo<T> {
    private final ArrayDeque<T> queue = new ArrayDeque<>();

    public synchronized void send(T message) {
        queue.add(message);
    }

    /** Takes everything sent so far, oldest first. */
    public synchronized List<T> drain() {
        List<T> all = new ArrayList<>(queue);
        queue.clear();
        return all;
    }

    public synchronized List<T> peekAll() {
        return List.copyOf(queue);
    }

    public synchronized boolean isEmpty() {
        return queue.isEmpty();
    }
}
