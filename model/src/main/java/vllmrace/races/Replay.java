package vllmrace.races;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.fix.FixSet;

/**
 * Runs a race's scenario on ONE thread, with its two actors' steps in a given order: a counterexample turned
 * into a deterministic test. The order is a schedule of actors ({@code 1 1 2 2 1 ...}: whose step runs
 * next); the same schedule can be replayed on any variant, even one whose coroutines have other steps (a
 * fixed variant may await at different points). Steps left over when the schedule ends run actor 1 first,
 * then actor 2; then the arbiter runs.
 */
public final class Replay {

    /** One scheduled step: which actor moved, and the step it was expected to run (null: any). */
    public record Move(int actor, String expectedStep) {
        public Move {
            if (actor != 1 && actor != 2) {
                throw new IllegalArgumentException("a scenario has actors 1 and 2, not " + actor);
            }
        }
    }

    /** What a replay did: the steps in the order they ran (set-up excluded), and the arbiter's outcome. */
    public record Result(RaceOutcome outcome, List<String> steps) {
    }

    private Replay() {
    }

    /** Reads the actor schedule off a step log: entries are {@code task: step}, matched to each actor's task. */
    public static List<Move> schedule(RaceScenario scenario, List<String> steps) {
        String task1 = scenario.actor1().task() + ": ";
        String task2 = scenario.actor2().task() + ": ";
        List<Move> moves = new ArrayList<>();
        for (String step : steps) {
            if (step.startsWith(task1)) {
                moves.add(new Move(1, step.substring(task1.length())));
            } else if (step.startsWith(task2)) {
                moves.add(new Move(2, step.substring(task2.length())));
            }
        }
        return moves;
    }

    /**
     * Replays {@code moves} on {@code race} under {@code fixes}. When {@code strict}, each move's expected step
     * name must be the one its actor runs next (a replay of the very run it came from); otherwise only the
     * actor order is kept.
     */
    public static Result run(Race race, FixSet fixes, List<Move> moves, boolean strict) {
        RaceScenario scenario = race.scenario(fixes);
        for (Move move : moves) {
            Coroutine<?> actor = move.actor() == 1 ? scenario.actor1() : scenario.actor2();
            if (actor.isDone()) {
                if (strict) {
                    throw new IllegalStateException("actor " + move.actor() + " has no step left for " + move.expectedStep());
                }
                continue;
            }
            if (strict && !Objects.equals(actor.nextStepName(), move.expectedStep())) {
                throw new IllegalStateException("actor " + move.actor() + " would run " + actor.nextStepName()
                        + ", the replay expects " + move.expectedStep());
            }
            actor.runNextStep();
        }
        if (strict && !(scenario.actor1().isDone() && scenario.actor2().isDone())) {
            throw new IllegalStateException("the replay left steps unrun");
        }
        scenario.actor1().run();
        scenario.actor2().run();
        RaceOutcome outcome = scenario.arbiter();
        return new Result(outcome, scenario.stepLog().entriesSince(scenario.setupSteps()));
    }
}
