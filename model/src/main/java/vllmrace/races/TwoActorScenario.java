package vllmrace.races;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationLog;

/**
 * What a scenario over one model instance shares: its step log and detectors, the end of its set-up, and two
 * actors built (not started) in the constructor. Subclasses build the model, call {@link #actors}, and classify.
 */
public abstract class TwoActorScenario implements RaceScenario {
    private final StepLog stepLog;
    private final ViolationLog violations;
    private int setupSteps;
    private Coroutine<Void> actor1;
    private Coroutine<Void> actor2;

    protected TwoActorScenario(StepLog stepLog, ViolationLog violations) {
        this.stepLog = stepLog;
        this.violations = violations;
    }

    /** Ends the set-up: everything logged so far belongs to it; the actors are built now, not yet started. */
    protected final void actors(Coroutine<Void> actor1, Coroutine<Void> actor2) {
        this.setupSteps = stepLog.size();
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
        return violations.all();
    }

    @Override
    public final StepLog stepLog() {
        return stepLog;
    }

    @Override
    public final int setupSteps() {
        return setupSteps;
    }

    /** True when an actor raised: a modelling error, classified UNEXPECTED. */
    protected final boolean actorFailed() {
        return actor1.failure() != null || actor2.failure() != null;
    }
}
