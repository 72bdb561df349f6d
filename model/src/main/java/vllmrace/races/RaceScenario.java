package vllmrace.races;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.Violation;

/**
 * A race as two concurrent actors and an arbiter, built on a fresh model per run. Every harness drives
 * the same object: JCStress runs each actor on its own thread, Lincheck model-checks them, and a replay
 * runs their steps one at a time in a counterexample's order.
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
}
