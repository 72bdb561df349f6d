package vllmrace.lincheck.scheduler;

import java.util.List;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;

/**
 * The scheduler's linearizability check: {@link SchedulerOperations} (add, abort, the busy loop's steps, transfer
 * completion) model-checked against {@link SchedulerSpecification}, SC1–SC5 validated after each part. Lincheck
 * generates random scenarios (2 threads; the busy loop's steps stay on one); a few custom scenarios, one per
 * scheduler race, make sure each race's window is in the explored space.
 */
public final class SchedulerLinearizability {
    public static final int ITERATIONS = 3;
    public static final int INVOCATIONS_PER_ITERATION = 30;

    private SchedulerLinearizability() {
    }

    public static LincheckResult check(FixSet fixes, Race focus) {
        SchedulerOperations.configure(fixes);
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
        return LincheckRun.check("scheduler linearizability " + fixes, SchedulerOperations.class, options,
                (ITERATIONS + custom) * invocations);
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
                        List.of(transfers(), step(), step(), step(), step(), step(), step()))));
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
