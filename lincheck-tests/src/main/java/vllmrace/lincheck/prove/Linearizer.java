package vllmrace.lincheck.prove;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Wing and Gong's search: is there an order of a history's operations, consistent with its real-time order, in which
 * the sequential specification returns every result the operations returned? The set-up's operations come first and
 * the final part's last, in program order; a parallel operation may go before another only if it did not start after
 * the other ended. Depth-first, the specification replayed from a fresh instance on each backtrack (histories are a
 * few operations long).
 */
final class Linearizer {
    /** One operation of a history: its call, its result, and the segments of its first and last code. */
    record Op(int thread, Call call, Object result, int start, int end) {
    }

    private final Subject subject;
    private final List<Op> init;
    private final List<Op> parallel;
    private final List<Op> post;

    Linearizer(Subject subject, List<Op> init, List<Op> parallel, List<Op> post) {
        this.subject = subject;
        this.init = init;
        // candidates in the order they started: the execution's own order is tried first, and most histories take it
        this.parallel = parallel.stream().sorted(java.util.Comparator.comparingInt(Op::start).thenComparingInt(Op::end)).toList();
        this.post = post;
    }

    /** A linearization (the parallel operations in order), or null when none exists. */
    List<Op> linearize() {
        Object spec = subject.newSpecification();
        if (!agree(spec, init)) {
            return null;
        }
        List<Op> order = new ArrayList<>();
        return search(order, new boolean[parallel.size()]) ? order : null;
    }

    /**
     * The first disagreement on the history's own order (set-up, parallel operations as they started, final part): what
     * the specification returns there instead. Shown with a counterexample that no order linearizes.
     */
    String firstDisagreementInExecutionOrder() {
        Object spec = subject.newSpecification();
        List<Op> all = new ArrayList<>(init);
        all.addAll(parallel);
        all.addAll(post);
        for (Op op : all) {
            Object expected = op.call().invoke(spec);
            if (!Objects.equals(expected, op.result())) {
                return "in the order they ran, " + op.call() + " returned " + op.result() + " where the specification returns " + expected;
            }
        }
        return "in the order they ran the specification agrees; the real-time order allows no other";
    }

    private boolean search(List<Op> order, boolean[] placed) {
        if (order.size() == parallel.size()) {
            Object spec = replay(order);
            return agree(spec, post);
        }
        for (int i = 0; i < parallel.size(); i++) {
            if (placed[i] || !minimal(i, placed)) {
                continue;
            }
            Object spec = replay(order);
            Op op = parallel.get(i);
            if (!Objects.equals(op.call().invoke(spec), op.result())) {
                continue;
            }
            placed[i] = true;
            order.add(op);
            if (search(order, placed)) {
                return true;
            }
            order.remove(order.size() - 1);
            placed[i] = false;
        }
        return false;
    }

    /** No operation still to place ended before operation {@code i} started. */
    private boolean minimal(int i, boolean[] placed) {
        for (int j = 0; j < parallel.size(); j++) {
            if (j != i && !placed[j] && parallel.get(j).end() < parallel.get(i).start()) {
                return false;
            }
        }
        return true;
    }

    private Object replay(List<Op> order) {
        Object spec = subject.newSpecification();
        for (Op op : init) {
            op.call().invoke(spec);
        }
        for (Op op : order) {
            op.call().invoke(spec);
        }
        return spec;
    }

    private static boolean agree(Object spec, List<Op> ops) {
        for (Op op : ops) {
            if (!Objects.equals(op.call().invoke(spec), op.result())) {
                return false;
            }
        }
        return true;
    }
}
