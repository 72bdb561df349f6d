package vllmrace.model.detect;

import java.util.ArrayList;
import java.util.List;

/**
 * Where every detector of one model instance records what it saw. A race is a finding, not a caller
 * error: the model keeps running past it (as upstream corrupts state or dies), and tests read the log.
 * Thread-safe; shared by the components wired into one engine.
 */
public final class ViolationLog {
    private final List<Violation> violations = new ArrayList<>();

    public synchronized void record(ViolationKind kind, String requestId, String detail) {
        violations.add(new Violation(kind, requestId, detail));
    }

    public synchronized List<Violation> all() {
        return List.copyOf(violations);
    }

    public synchronized boolean isEmpty() {
        return violations.isEmpty();
    }

    public synchronized boolean has(ViolationKind kind) {
        for (Violation v : violations) {
            if (v.kind() == kind) {
                return true;
            }
        }
        return false;
    }

    /** True once an upstream assert would have fired on the busy loop. */
    public synchronized boolean engineDead() {
        for (Violation v : violations) {
            if (v.kind().killsEngine()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public synchronized String toString() {
        return violations.toString();
    }
}
