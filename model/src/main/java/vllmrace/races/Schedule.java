package vllmrace.races;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import vllmrace.model.asyncio.Coroutine;

/**
 * The order of a run's actor steps: which actor ran each atomic step ({@code "2122"}), optionally with the step each
 * move ran. The one schedule type of the suite: the step enumerator generates them, a counterexample's step log is
 * decoded into one ({@link #fromSteps}), a replay page is one, and the Lincheck tallies count them.
 */
public record Schedule(List<Move> moves) {

    /** One scheduled step: which actor moved, and the step it ran (null: any). */
    public record Move(int actor, String step) {
        public Move {
            if (actor != 1 && actor != 2) {
                throw new IllegalArgumentException("a scenario has actors 1 and 2, not " + actor);
            }
        }
    }

    /** A step-log entry and who ran it: actor 1, actor 2, or 0 for the arbiter (the rest of the system). */
    public record Tagged(int actor, String entry) {
        public String who() {
            return actor == 0 ? "arbiter" : "actor " + actor;
        }
    }

    /** What running a schedule did: the steps in the order they ran (set-up excluded), and the judged outcome. */
    public record Result(RaceOutcome outcome, List<String> steps) {
    }

    public Schedule {
        moves = List.copyOf(moves);
    }

    /** A schedule written as actor numbers, {@code "2122"}. */
    public static Schedule of(String actors) {
        List<Move> moves = new ArrayList<>();
        for (char c : actors.toCharArray()) {
            if (c != '1' && c != '2') {
                throw new IllegalArgumentException("a schedule is a string of 1s and 2s, got '" + actors + "'");
            }
            moves.add(new Move(c - '0', null));
        }
        return new Schedule(moves);
    }

    /** Every merge of two actors' full step lists, actor 1 first: the first is 1..12..2, the last 2..21..1. */
    public static List<Schedule> all(int steps1, int steps2) {
        List<Schedule> all = new ArrayList<>();
        merge(steps1, steps2, "", all);
        return all;
    }

    /** Every merge of {@code probe}'s two actors' step lists. */
    public static List<Schedule> all(RaceScenario probe) {
        return all(probe.actor1().stepCount(), probe.actor2().stepCount());
    }

    private static void merge(int n1, int n2, String prefix, List<Schedule> all) {
        if (n1 == 0 && n2 == 0) {
            all.add(of(prefix));
            return;
        }
        if (n1 > 0) {
            merge(n1 - 1, n2, prefix + "1", all);
        }
        if (n2 > 0) {
            merge(n1, n2 - 1, prefix + "2", all);
        }
    }

    /**
     * Tags each step-log entry ({@code task: step}) with the actor whose task it is, by {@code scenario}'s actors' task
     * names; an entry of neither actor is the arbiter's.
     */
    public static List<Tagged> tag(RaceScenario scenario, List<String> entries) {
        String task1 = scenario.actor1().task() + ": ";
        String task2 = scenario.actor2().task() + ": ";
        List<Tagged> tagged = new ArrayList<>();
        for (String entry : entries) {
            tagged.add(new Tagged(entry.startsWith(task1) ? 1 : entry.startsWith(task2) ? 2 : 0, entry));
        }
        return tagged;
    }

    /** The schedule of a step log: one move per actor entry, with the step it ran (the task prefix stripped). */
    public static Schedule fromSteps(RaceScenario scenario, List<String> entries) {
        List<Move> moves = new ArrayList<>();
        for (Tagged t : tag(scenario, entries)) {
            if (t.actor() != 0) {
                String task = (t.actor() == 1 ? scenario.actor1() : scenario.actor2()).task() + ": ";
                moves.add(new Move(t.actor(), t.entry().substring(task.length())));
            }
        }
        return new Schedule(moves);
    }

    /** The actor numbers, {@code "2122"}. */
    public String actors() {
        StringBuilder sb = new StringBuilder();
        moves.forEach(m -> sb.append(m.actor()));
        return sb.toString();
    }

    /**
     * Runs this schedule on {@code scenario} (fresh, not started), then the arbiter, and judges the run. When
     * {@code strict}, each move's step must be the one its actor runs next and the schedule must run every step (a
     * replay of the run it came from); otherwise only the actor order is kept: a move for an actor that has ended is
     * skipped, and steps left when the schedule ends run actor 1 first, then actor 2.
     */
    public Result run(RaceScenario scenario, boolean strict) {
        for (Move move : moves) {
            Coroutine<?> actor = move.actor() == 1 ? scenario.actor1() : scenario.actor2();
            if (actor.isDone()) {
                if (strict) {
                    throw new IllegalStateException("actor " + move.actor() + " has no step left for " + move.step());
                }
                continue;
            }
            if (strict && move.step() != null && !Objects.equals(actor.nextStepName(), move.step())) {
                throw new IllegalStateException("actor " + move.actor() + " would run " + actor.nextStepName()
                        + ", the schedule expects " + move.step());
            }
            actor.runNextStep();
        }
        if (strict && !(scenario.actor1().isDone() && scenario.actor2().isDone())) {
            throw new IllegalStateException("the schedule left steps unrun");
        }
        scenario.actor1().run();
        scenario.actor2().run();
        RaceOutcome outcome = scenario.judge();
        return new Result(outcome, scenario.stepLog().entriesSince(scenario.setupSteps()));
    }

    @Override
    public String toString() {
        return actors();
    }
}
