package vllmrace.lincheck.prove;

import java.util.ArrayList;
import java.util.List;
import vllmrace.model.asyncio.StepGate;

/**
 * The bounded-exhaustive linearizability check: every program of a {@link Bound}, every interleaving of its two
 * threads at step granularity (stateless, depth-first: each interleaving re-runs the program from a fresh operations
 * object, replaying the choices before the one it changes), each history checked against the sequential specification
 * ({@link Linearizer}) and the invariants validated after each part, as Lincheck validates them.
 *
 * <p>An operation's invocation is placed at its first step and its response at its last: the tightest history of an
 * interleaving. A looser placement only allows more orders, so if the tightest history linearizes, every history of
 * that interleaving does. Like Lincheck's model checking, this is a check under sequential consistency at the model's
 * step granularity (a coroutine step, or a whole operation that has none), bounded by the programs of the bound.
 */
public final class ExhaustiveCheck {
    static final String INVARIANT_BROKEN = "invariant broken: ";

    private ExhaustiveCheck() {
    }

    /** Runs {@code bounds} in order, stopping at the first failing history. */
    public static ProofResult check(String name, Subject subject, List<Bound> bounds) {
        long start = System.nanoTime();
        subject.configure().run();
        long[] programs = {0};
        long[] histories = {0};
        ProofResult.Counterexample[] found = {null};
        try (ControlledThreads threads = new ControlledThreads()) {
            StepGate.install(threads);
            try {
                for (Bound bound : bounds) {
                    bound.forEachProgram(subject.operations(), program -> {
                        programs[0]++;
                        found[0] = explore(subject, program, threads, histories);
                        return found[0] == null;
                    });
                    if (found[0] != null) {
                        break;
                    }
                }
            } finally {
                StepGate.uninstall(threads);
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        return new ProofResult(name, bounds.stream().map(Bound::toString).toList(), programs[0], histories[0], millis,
                found[0] == null, found[0]);
    }

    /** Every interleaving of {@code program}; the first failing history, or null. */
    static ProofResult.Counterexample explore(Subject subject, Program program, ControlledThreads threads, long[] histories) {
        List<Integer> prefix = new ArrayList<>();
        while (true) {
            List<int[]> choices = new ArrayList<>();
            histories[0]++;
            ProofResult.Counterexample failure = run(subject, program, threads, prefix, choices);
            if (failure != null) {
                return failure;
            }
            int i = choices.size() - 1;
            while (i >= 0 && next(choices.get(i)) < 0) {
                i--;
            }
            if (i < 0) {
                return null;
            }
            prefix = new ArrayList<>();
            for (int k = 0; k < i; k++) {
                prefix.add(choices.get(k)[0]);
            }
            prefix.add(next(choices.get(i)));
        }
    }

    /** The next thread to try at a choice point {chosen, enabled mask}, or -1. */
    private static int next(int[] choice) {
        for (int t = choice[0] + 1; t < 2; t++) {
            if ((choice[1] & (1 << t)) != 0) {
                return t;
            }
        }
        return -1;
    }

    /** One interleaving: follows {@code prefix}, then thread 1 first wherever it may; records its choices. */
    private static ProofResult.Counterexample run(Subject subject, Program program, ControlledThreads threads,
                                                  List<Integer> prefix, List<int[]> choices) {
        Object target = subject.newOperations();
        List<String> lines = new ArrayList<>();
        List<Linearizer.Op> init = sequential(program.init(), target, -1, lines, "set-up");
        String broken = program.init().isEmpty() ? null : subject.validate(target);
        if (broken != null) {
            return failure(program, lines, INVARIANT_BROKEN + broken + " (after the set-up)");
        }
        threads.run(program, target, prefix, choices);
        List<Linearizer.Op> parallel = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            ControlledThreads.Done[] done = threads.done(t);
            for (int k = 0; k < done.length; k++) {
                parallel.add(new Linearizer.Op(t, program.thread(t).get(k), done[k].result(), done[k].start(), done[k].end()));
            }
        }
        describe(threads.segments(), program, parallel, lines);
        broken = subject.validate(target);
        if (broken != null) {
            return failure(program, lines, INVARIANT_BROKEN + broken + " (after the parallel part)");
        }
        List<Linearizer.Op> post = sequential(program.post(), target, 2, lines, "then");
        broken = program.post().isEmpty() ? null : subject.validate(target);
        if (broken != null) {
            return failure(program, lines, INVARIANT_BROKEN + broken + " (after the final part)");
        }
        Linearizer linearizer = new Linearizer(subject, init, parallel, post);
        if (linearizer.linearize() == null) {
            return failure(program, lines, "not linearizable: no order of the operations that respects their real-time "
                    + "order gives these results in the sequential specification (" + linearizer.firstDisagreementInExecutionOrder()
                    + ")" + threw(init, parallel, post));
        }
        return null;
    }

    private static String threw(List<Linearizer.Op> init, List<Linearizer.Op> parallel, List<Linearizer.Op> post) {
        List<Linearizer.Op> all = new ArrayList<>(init);
        all.addAll(parallel);
        all.addAll(post);
        return all.stream().filter(op -> op.result() instanceof Call.Threw).findFirst()
                .map(op -> " (" + op.call() + " " + op.result() + ")").orElse("");
    }

    private static List<Linearizer.Op> sequential(List<Call> calls, Object target, int thread, List<String> lines, String part) {
        List<Linearizer.Op> ops = new ArrayList<>();
        for (Call c : calls) {
            Object result = c.invoke(target);
            ops.add(new Linearizer.Op(thread, c, result, -1, -1));
            lines.add(part + ": " + c + " returns " + result);
        }
        return ops;
    }

    private static void describe(List<ControlledThreads.Segment> segments, Program program, List<Linearizer.Op> parallel,
                                 List<String> lines) {
        for (int s = 0; s < segments.size(); s++) {
            ControlledThreads.Segment seg = segments.get(s);
            // the parallel ops are thread 1's in order, then thread 2's
            Linearizer.Op op = parallel.get(seg.thread() == 0 ? seg.op() : program.thread1().size() + seg.op());
            String ended = op.end() == s ? ", returns " + op.result() : "";
            lines.add((s + 1) + ". thread " + (seg.thread() + 1) + ": " + op.call() + (seg.steps().isEmpty() ? "" : " " + seg.steps()) + ended);
        }
    }

    private static ProofResult.Counterexample failure(Program program, List<String> lines, String reason) {
        String once = reason.startsWith(INVARIANT_BROKEN + INVARIANT_BROKEN) ? reason.substring(INVARIANT_BROKEN.length()) : reason;
        return new ProofResult.Counterexample(program, List.copyOf(lines), once);
    }
}
