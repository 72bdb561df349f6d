package vllmrace.lincheck.prove;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;

/** One subject and the bounds to check it within. A component's check is a list of these. */
public record Proof(Subject subject, List<Bound> bounds) {
    public Proof {
        bounds = List.copyOf(bounds);
    }

    public ProofResult run() {
        return ExhaustiveCheck.check(subject.name(), subject, bounds);
    }

    /** Runs {@code proofs} in order, stopping at the first that fails; one result over all. */
    public static ProofResult runAll(String name, List<Proof> proofs) {
        ProofResult all = null;
        for (Proof p : proofs) {
            ProofResult r = p.run();
            all = all == null ? r : all.plus(r);
            if (r.failed()) {
                break;
            }
        }
        if (all == null) {
            throw new IllegalArgumentException(name + ": no proof to run");
        }
        return new ProofResult(name, all.bounds(), all.programs(), all.histories(), all.millis(), all.complete(), all.counterexample());
    }

    /** The bound of a race's Lincheck shape at {@code depth} (see {@link Depth}); {@code alphabet} is the check's every call. */
    public static Bound shapeBound(String name, ExecutionScenario shape, List<Call> alphabet, Depth depth) {
        List<Call> init = calls(shape.getInitExecution());
        List<Call> post = calls(shape.getPostExecution());
        List<Actor> t1 = shape.getParallelExecution().get(0);
        List<Actor> t2 = shape.getParallelExecution().get(1);
        return switch (depth.kind()) {
            case WHOLE -> Bound.of(name, init, alphabet, depth.n(), post);
            case MIXED -> {
                List<Call> both = new ArrayList<>(new LinkedHashSet<>(calls(t1)));
                both.addAll(calls(t2).stream().filter(c -> !both.contains(c)).toList());
                yield Bound.of(name, init, both, Math.max(t1.size(), t2.size()) + depth.n(), post);
            }
            case SHAPE -> new Bound(name, List.of(init), new ArrayList<>(new LinkedHashSet<>(calls(t1))), t1.size(),
                    new ArrayList<>(new LinkedHashSet<>(calls(t2))), t2.size(), List.of(post));
        };
    }

    public static List<Call> calls(List<Actor> actors) {
        return actors.stream().map(Call::of).toList();
    }
}
