package vllmrace.lincheck.scheduler;

import java.util.List;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import vllmrace.lincheck.prove.Call;
import vllmrace.lincheck.prove.Depth;
import vllmrace.lincheck.prove.Proof;
import vllmrace.lincheck.prove.Subject;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;

/**
 * The scheduler's linearizability check: {@link SchedulerOperations} (add, abort, the busy loop's steps, transfer
 * completion) model-checked against {@link SchedulerSpecification}, SC1–SC5 validated after each part. Lincheck
 * generates random scenarios (2 threads; the busy loop's steps stay on one); a few custom scenarios, one per
 * scheduler race, make sure each race's window is in the explored space. The deployment decides the engine ids
 * (randomized or not) and the batch queue (sync scheduling: one batch in flight).
 */
public final class SchedulerLinearizability {
    public static final int ITERATIONS = 3;
    public static final int INVOCATIONS_PER_ITERATION = 30;

    private SchedulerLinearizability() {
    }

    public static LincheckResult check(FixSet fixes, Race focus) {
        return check(fixes, focus == null ? null : focus.configuration(), focus);
    }

    /** The Lincheck check under {@code fixes} and a deployment's configuration (null: the default deployment). */
    public static LincheckResult check(FixSet fixes, Configuration configuration, Race focus) {
        SchedulerOperations.configure(fixes, configuration == null ? Configuration.DEFAULT : configuration);
        int invocations = LincheckRun.scaled(INVOCATIONS_PER_ITERATION);
        ModelCheckingOptions options = LincheckRun.modelChecking(invocations)
                .iterations(ITERATIONS)
                .threads(2)
                .actorsPerThread(4)
                .actorsBefore(3)
                .actorsAfter(3)
                .sequentialSpecification(SchedulerSpecification.class);
        List<RaceShape> shapes = new java.util.ArrayList<>(raceScenarios());
        // the focus race's own shape first: Lincheck runs the custom scenarios in order, so it fails there sooner
        shapes.sort(java.util.Comparator.comparing(shape -> focus == null || !shape.races().contains(focus)));
        for (RaceShape shape : shapes) {
            options.addCustomScenario(shape.scenario());
        }
        int custom = raceScenarios().size();
        return LincheckRun.check("scheduler linearizability " + fixes + (configuration == null ? "" : " " + configuration),
                SchedulerOperations.class, options,
                (ITERATIONS + custom) * invocations);
    }

    /** Every call of the bounded-exhaustive check: both requests' add and abort, the busy loop's step, the worker. */
    public static final List<Call> ALPHABET = List.of(Call.of("addRequest", 0), Call.of("addRequest", 1), Call.of("abort", 0),
            Call.of("abort", 1), Call.of("busyLoopStep"), Call.of("transfersComplete"));

    /**
     * The bounded-exhaustive check under {@code fixes} and a deployment's configuration (null: the default deployment):
     * each race shape's set-up and drain, every program between them within {@code depth}; the focus race's shape first.
     */
    public static List<Proof> proofs(FixSet fixes, Configuration configuration, Race focus, Depth depth) {
        Configuration conf = configuration == null ? Configuration.DEFAULT : configuration;
        Subject subject = new Subject("scheduler " + fixes + (configuration == null ? "" : " " + conf), SchedulerOperations.class,
                SchedulerSpecification.class, () -> SchedulerOperations.configure(fixes, conf));
        List<RaceShape> shapes = new java.util.ArrayList<>(raceScenarios());
        shapes.sort(java.util.Comparator.comparing(shape -> focus == null || !shape.races().contains(focus)));
        return List.of(new Proof(subject, shapes.stream().map(shape -> bound(shape, depth)).toList()));
    }

    /** The client's and the worker's calls: the other thread is the busy loop's (its steps are one non-parallel group). */
    public static final List<Call> CLIENT = ALPHABET.stream().filter(c -> !c.method().equals("busyLoopStep")).toList();

    /**
     * A shape's bound. Under a whole depth the threads keep their roles: the busy loop runs up to one step more than in
     * the shape, the client and the worker any sequence of {@link #CLIENT} calls up to the depth's calls per thread.
     */
    private static vllmrace.lincheck.prove.Bound bound(RaceShape shape, Depth depth) {
        if (depth.kind() != Depth.Kind.WHOLE) {
            return Proof.shapeBound(shape.races().toString(), shape.scenario(), ALPHABET, depth);
        }
        ExecutionScenario s = shape.scenario();
        return new vllmrace.lincheck.prove.Bound(shape.races().toString(), List.of(Proof.calls(s.getInitExecution())),
                List.of(Call.of("busyLoopStep")), s.getParallelExecution().get(0).size() + 1, CLIENT, depth.n(),
                List.of(Proof.calls(s.getPostExecution())));
    }

    /** A custom scenario and the races whose window it holds. */
    record RaceShape(List<Race> races, ExecutionScenario scenario) {
    }

    /** One scenario per scheduler race: the busy loop on one thread, the client (and worker) on the other. */
    static List<RaceShape> raceScenarios() {
        Actor input = step();
        return List.of(
                // DoubleFreeOnAbortedAsyncSave / AbortLosesToFinalStep: r0's final step in flight, ABORT arrives
                new RaceShape(List.of(Race.DoubleFreeOnAbortedAsyncSave, Race.AbortLosesToFinalStep),
                LincheckRun.scenario(List.of(add(0), input, step(), step()),
                        List.of(step(), step(), step()),
                        List.of(abort(0)),
                        List.of(transfers(), step(), step(), step(), step(), step(), step(), step(), step(), step()))),
                // AbortOfFinishedDelayFreed: r0 finished, its save in flight, ABORT arrives
                new RaceShape(List.of(Race.AbortOfFinishedDelayFreed), LincheckRun.scenario(List.of(add(0), step(), step(), step(), step(), step(), step()),
                        List.of(step(), step(), step(), step(), step(), step()),
                        List.of(abort(0), transfers()),
                        List.of(transfers(), step(), step(), step(), step(), step(), step()))),
                // AbortedLoadFreesBlocks: r1's load in flight, ABORT arrives; r0 may get the blocks
                new RaceShape(List.of(Race.AbortedLoadFreesBlocks), LincheckRun.scenario(List.of(add(1), add(0), step(), step()),
                        List.of(step(), step(), step(), step()),
                        List.of(abort(1), transfers()),
                        List.of(step(), step(), step(), step(), step(), step()))),
                // AbortedLoadLeak: r1's load landed and is being reported, ABORT arrives
                new RaceShape(List.of(Race.AbortedLoadLeak), LincheckRun.scenario(List.of(add(1), step(), step(), step(), transfers(), step(), step()),
                        List.of(step(), step(), step()),
                        List.of(abort(1)),
                        List.of(transfers(), step(), step(), step(), step(), step(), step()))),
                // DoubleAbortApplication / ReusedIdStaleOutputUnderflow: r1 loaded, its step in flight, the client aborts and
                // resubmits r1 (r1, never saved, is freed at once: r0's abort would leave it held for its save)
                new RaceShape(List.of(Race.DoubleAbortApplication, Race.ReusedIdStaleOutputUnderflow),
                        LincheckRun.scenario(List.of(add(1), step(), step(), step(), transfers(), step(), step(), step(), step(), step()),
                        List.of(step(), step(), step(), step()),
                        List.of(abort(1), add(1)),
                        List.of(transfers(), step(), step(), step(), step(), step(), step(), step(), step(), step()))));
    }

    private static Actor step() {
        return LincheckRun.call(SchedulerOperations.class, "busyLoopStep");
    }

    private static Actor add(int id) {
        return LincheckRun.call(SchedulerOperations.class, "addRequest", id);
    }

    private static Actor abort(int id) {
        return LincheckRun.call(SchedulerOperations.class, "abort", id);
    }

    private static Actor transfers() {
        return LincheckRun.call(SchedulerOperations.class, "transfersComplete");
    }
}
