package vllmrace.races;

import java.util.List;
import vllmrace.model.RaisedByUpstream;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.Violation;

/**
 * A race as two concurrent actors and an arbiter, built on a fresh model per run. Every harness drives
 * the same object: JCStress runs each actor on its own thread, Lincheck model-checks them, the step enumerator and a
 * replay run their steps one at a time in a given order. Every harness reads the run's outcome through
 * {@link #judge()}.
 */
public interface RaceScenario {
    /** The first actor's upstream operation, as a coroutine (built with the scenario, not yet started). */
    Coroutine<?> actor1();

    /** The second actor's upstream operation, as a coroutine (built with the scenario, not yet started). */
    Coroutine<?> actor2();

    /** After both actors: lets the rest of the system run to quiescence and classifies the run. */
    RaceOutcome arbiter();

    /** Everything the model's detectors recorded so far. */
    List<Violation> violations();

    /** Every atomic step run so far, set-up included. */
    StepLog stepLog();

    /** How many {@link #stepLog()} entries belong to the set-up before the actors start. */
    int setupSteps();

    /**
     * The one judge of every scenario: the arbiter's outcome, provided the detectors that fired are exactly what that
     * outcome declares ({@link RaceOutcome#accepts}: a violating outcome's detectors and declared cascade, a clean one's
     * tolerated detectors) and no actor raised anything upstream does not raise on this path (not a
     * {@link RaisedByUpstream}); otherwise the outcome enum's {@link ModellingError} constant. A stray detector or a broken
     * actor can never pass for the race, nor for a clean run.
     */
    default RaceOutcome judge() {
        RaceOutcome outcome = arbiter();
        if (outcome.modellingError()) {
            return outcome;
        }
        if (unexpectedActorFailure() != null || !outcome.accepts(firedDetectors())) {
            return RaceOutcome.modellingErrorOf(((Enum<?>) outcome).getDeclaringClass().asSubclass(RaceOutcome.class));
        }
        return outcome;
    }

    /** The kinds of every detector finding recorded so far. */
    default java.util.Set<vllmrace.model.detect.ViolationKind> firedDetectors() {
        java.util.Set<vllmrace.model.detect.ViolationKind> fired = java.util.EnumSet.noneOf(vllmrace.model.detect.ViolationKind.class);
        violations().forEach(v -> fired.add(v.kind()));
        return fired;
    }

    /** The first exception an actor raised that upstream does not raise on this path, or null. */
    default RuntimeException unexpectedActorFailure() {
        for (Coroutine<?> actor : List.of(actor1(), actor2())) {
            RuntimeException failure = actor.failure();
            if (failure != null && !(failure instanceof RaisedByUpstream)) {
                return failure;
            }
        }
        return null;
    }
}
