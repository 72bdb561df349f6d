package vllmrace.races;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationLog;

/**
 * The one base of every race scenario: its step log and detectors, the end of its set-up, and two actors built (not
 * started) in the constructor. Subclasses build the model, call {@link #actors}, and classify the ending in
 * {@link #arbiter()}; {@link RaceScenario#judge()} then accepts the outcome only with exactly the detectors it declares.
 */
public abstract class TwoActorScenario implements RaceScenario {
    private final StepLog stepLog;
    private final ViolationLog violations;
    private int setupSteps;
    private Coroutine<?> actor1;
    private Coroutine<?> actor2;

    protected TwoActorScenario(StepLog stepLog, ViolationLog violations) {
        this.stepLog = stepLog;
        this.violations = violations;
    }

    /** Ends the set-up: everything logged so far belongs to it; the actors are built now, not yet started. */
    protected final void actors(Coroutine<?> actor1, Coroutine<?> actor2) {
        this.setupSteps = stepLog.size();
        this.actor1 = actor1;
        this.actor2 = actor2;
    }

    @Override
    public final Coroutine<?> actor1() {
        return actor1;
    }

    @Override
    public final Coroutine<?> actor2() {
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

    /** The scenario's detector log (for the judge's own tests, which add a stray finding to a run). */
    final ViolationLog violationLog() {
        return violations;
    }

    /**
     * Whether the run is {@code outcome} by its detectors: exactly what it declares fired (its own, plus any of its
     * declared cascade), and no actor raised. An arbiter picks a violating outcome by this, never by one detector alone;
     * the judge checks the same again.
     */
    protected final boolean fired(RaceOutcome outcome) {
        java.util.Set<vllmrace.model.detect.ViolationKind> kinds = java.util.EnumSet.noneOf(vllmrace.model.detect.ViolationKind.class);
        violations.all().forEach(v -> kinds.add(v.kind()));
        return outcome.violation() && outcome.accepts(kinds) && !actorFailed();
    }

    /**
     * The violating outcome of {@code outcomes} the run is by its detectors ({@link #fired}), the first in declaration
     * order (most severe first), or null when none is: then the run is clean or a modelling error, for the arbiter to say.
     */
    protected final <E extends Enum<E> & RaceOutcome> RaceOutcome firedOutcome(Class<E> outcomes) {
        for (E outcome : outcomes.getEnumConstants()) {
            if (fired(outcome)) {
                return outcome;
            }
        }
        return null;
    }

    /** True when an actor raised: a modelling error, classified UNEXPECTED. */
    protected final boolean actorFailed() {
        return actor1.failure() != null || actor2.failure() != null;
    }
}
