package vllmrace.races;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * One clean ending as its scenario declares it: a {@link Clean} outcome and the facts that must all hold once the run
 * settled (each named request's final status and finish reasons, {@code request_finished} once, every block back), and
 * the one exception an actor may end with, where upstream raises to the caller (an {@code add_request} of an id still
 * running). The shared arbiter takes the first declared ending whose facts hold; a run that matches none is the
 * modelling error. Scenarios build endings with {@link TwoActorScenario#ending} and the facts their base offers.
 */
public final class Ending {
    /** A named condition on the settled run: {@code what} says it, for a reader of the scenario. */
    public record Fact(String what, BooleanSupplier holds) {
        public Fact {
            Objects.requireNonNull(what, "what");
            Objects.requireNonNull(holds, "holds");
        }
    }

    private final RaceOutcome outcome;
    private final List<Fact> facts = new ArrayList<>();
    private Class<? extends RuntimeException> actor2Raises;

    Ending(RaceOutcome outcome, List<Fact> baseFacts) {
        if (Objects.requireNonNull(outcome, "outcome").kind() != OutcomeKind.CLEAN) {
            throw new IllegalArgumentException("an ending is a @Clean outcome, " + outcome + " is " + outcome.kind());
        }
        this.outcome = outcome;
        facts.addAll(baseFacts);
    }

    /** These facts hold too. */
    public Ending and(Fact... more) {
        facts.addAll(List.of(more));
        return this;
    }

    /** A fact the scenario's own helpers do not cover, said in words. */
    public Ending and(String what, BooleanSupplier holds) {
        return and(new Fact(what, holds));
    }

    /** Actor 2 ended by raising {@code type} (what upstream raises to that caller); without this, any raise rules the ending out. */
    public Ending actor2Raises(Class<? extends RuntimeException> type) {
        this.actor2Raises = Objects.requireNonNull(type, "type");
        return this;
    }

    public RaceOutcome outcome() {
        return outcome;
    }

    /** The facts, base facts first, in declaration order. */
    public List<Fact> facts() {
        return List.copyOf(facts);
    }

    /** Whether the run ended so: each actor's failure as declared (none, or actor 2's declared type) and every fact. */
    boolean holds(RuntimeException actor1Failure, RuntimeException actor2Failure) {
        if (actor1Failure != null) {
            return false;
        }
        boolean raisedAsDeclared = actor2Raises == null ? actor2Failure == null : actor2Raises.isInstance(actor2Failure);
        return raisedAsDeclared && facts.stream().allMatch(f -> f.holds().getAsBoolean());
    }
}
