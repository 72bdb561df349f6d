package vllmrace.races.connector;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.Violation;
import vllmrace.races.RaceScenario;

/** What every connector race shares: a {@link ConnectorRig} and two actors built in the constructor. */
abstract class ConnectorRaceScenario implements RaceScenario {
    protected final ConnectorRig rig;
    private int setupSteps;
    private Coroutine<Void> actor1;
    private Coroutine<Void> actor2;

    ConnectorRaceScenario(ConnectorRig rig) {
        this.rig = rig;
    }

    /** Ends the set-up: everything logged so far belongs to it; the actors are built now, not yet started. */
    protected final void actors(Coroutine<Void> actor1, Coroutine<Void> actor2) {
        this.setupSteps = rig.stepLog().size();
        this.actor1 = actor1;
        this.actor2 = actor2;
    }

    @Override
    public final Coroutine<Void> actor1() {
        return actor1;
    }

    @Override
    public final Coroutine<Void> actor2() {
        return actor2;
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
        return actor1.failure() != null || actor2.failure() != null;
    }

    public ConnectorRig rig() {
        return rig;
    }
}
