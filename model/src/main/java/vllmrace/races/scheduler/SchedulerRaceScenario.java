package vllmrace.races.scheduler;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.Violation;
import vllmrace.races.RaceScenario;

/**
 * What every scheduler race shares: an {@link EngineCoreRig}, actor 1 = a client ABORT reaching the input
 * thread, actor 2 = the busy loop (and the worker's transfer completions) in program order.
 */
abstract class SchedulerRaceScenario implements RaceScenario {
    protected final EngineCoreRig rig;
    private int setupSteps;
    private Coroutine<Void> abort;
    private Coroutine<Void> busyLoop;

    SchedulerRaceScenario(EngineCoreRig rig) {
        this.rig = rig;
    }

    /** Ends the set-up: everything logged so far belongs to it; the actors are built now, not yet started. */
    protected final void actors(Coroutine<Void> abort, Coroutine<Void> busyLoop) {
        this.setupSteps = rig.stepLog().size();
        this.abort = abort;
        this.busyLoop = busyLoop;
    }

    @Override
    public final Coroutine<Void> actor1() {
        return abort;
    }

    @Override
    public final Coroutine<Void> actor2() {
        return busyLoop;
    }

    @Override
    public final List<Violation> violations() {
        return rig.violations().all();
    }

    @Override
    public final StepLog stepLog() {
        return rig.stepLog();
    }

    @Override
    public final int setupSteps() {
        return setupSteps;
    }

    /** True when an actor raised: a modelling error, classified UNEXPECTED. */
    protected final boolean actorFailed() {
        return abort.failure() != null || busyLoop.failure() != null;
    }

    public EngineCoreRig rig() {
        return rig;
    }
}
