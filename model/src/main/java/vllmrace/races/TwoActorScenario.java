package vllmrace.races;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationLog;

/**
 * The one base of every race scenario: its step log and detectors, the end of its set-up, and two actors built (not
 * started) in the constructor. Subclasses build the model, call {@link #actors}, say how to {@link #settle()} and
 * declare their clean {@link #endings()}; the one {@link #arbiter()} classifies the run, and {@link RaceScenario#judge()}
 * accepts the outcome only with exactly the detectors it declares.
 */
public abstract class TwoActorScenario implements RaceScenario {
    private final vllmrace.model.Wired system;
    private final StepLog stepLog;
    private final ViolationLog violations;
    private int setupSteps;
    private Coroutine<?> actor1;
    private Coroutine<?> actor2;

    /** A scenario over {@code system}: its step log and detectors are the scenario's. */
    protected TwoActorScenario(vllmrace.model.Wired system) {
        this.system = system;
        this.stepLog = system.stepLog();
        this.violations = system.violations();
    }

    /** Ends the set-up: everything logged so far belongs to it; the actors are built now, not yet started. */
    protected final void actors(Coroutine<?> actor1, Coroutine<?> actor2) {
        this.setupSteps = stepLog.size();
        this.actor1 = actor1;
        this.actor2 = actor2;
    }

    /** The model the scenario runs on (its engine process, and the frontend where it has one). */
    public final vllmrace.model.Wired system() {
        return system;
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

    /**
     * The arbiter every race shares: {@link #settle()} the system, then the violating outcome the detectors make the run
     * ({@link #fired}: its declaration decides, the first in declaration order); else, when a detector fired that no clean
     * outcome tolerates, the shared modelling error; else the first of the scenario's {@link #endings()} that holds. The judge then checks
     * the declaration once more. A system that cannot settle after an actor raised what upstream does not is that broken
     * actor's modelling error (the settle's own complaint is a symptom); one that cannot settle otherwise throws, which
     * every engine reports as a harness error. Only the race hunt, which is no race, classifies its runs otherwise.
     */
    @Override
    public RaceOutcome arbiter() {
        Class<? extends Enum<?>> outcomes = outcomeEnum();
        try {
            settle();
        } catch (RuntimeException e) {
            if (unexpectedActorFailure() == null) {
                throw e;
            }
            return RaceOutcome.modellingErrorOf(outcomes.asSubclass(RaceOutcome.class));
        }
        for (Enum<?> constant : outcomes.getEnumConstants()) {
            if (fired((RaceOutcome) constant)) {
                return (RaceOutcome) constant;
            }
        }
        if (!violations.isEmpty() && java.util.Arrays.stream(outcomes.getEnumConstants()).map(c -> (RaceOutcome) c)
                .noneMatch(o -> o.kind() == OutcomeKind.CLEAN && o.accepts(firedDetectors()))) {
            return RaceOutcome.UNEXPECTED;
        }
        return cleanEnding();
    }

    /** Lets the rest of the system run to quiescence after the actors: the environment delivers what it will, the detectors at quiescence run. */
    protected void settle() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " must settle the system before it is judged");
    }

    /**
     * The scenario's clean endings, one or more per {@link Clean} outcome, in the order the arbiter tries them; built
     * with {@link #ending} (read after the run settled, so the facts read the settled state).
     */
    protected abstract List<Ending> endings();

    /** A clean ending of {@code outcome}, starting from the facts every ending of this kind of scenario shares ({@link #baseFacts}). */
    protected final Ending ending(RaceOutcome outcome) {
        return new Ending(outcome, baseFacts());
    }

    /** The facts every clean ending includes: none here; a rig's scenarios add "every block back". */
    protected List<Ending.Fact> baseFacts() {
        return List.of();
    }

    /** How the run ended when no violating outcome's detectors fired: the first declared ending that holds, or the modelling error. */
    private RaceOutcome cleanEnding() {
        for (Ending ending : endings()) {
            if (ending.holds(actor1.failure(), actor2.failure())) {
                return ending.outcome();
            }
        }
        return RaceOutcome.UNEXPECTED;
    }

    /** Set-up: the model reached the state the scenario's story starts from, else the scenario is wrong (not the model). */
    protected static void requireSetUp(boolean holds, String what) {
        if (!holds) {
            throw new IllegalStateException("set-up: " + what);
        }
    }

    /** The scenario's outcome enum: its one nested enum implementing {@link RaceOutcome}. */
    @SuppressWarnings("unchecked")
    private Class<? extends Enum<?>> outcomeEnum() {
        return OUTCOMES.get(getClass());
    }

    private static final ClassValue<Class<? extends Enum<?>>> OUTCOMES = new ClassValue<>() {
        @Override
        @SuppressWarnings("unchecked")
        protected Class<? extends Enum<?>> computeValue(Class<?> scenario) {
            List<Class<?>> found = java.util.Arrays.stream(scenario.getDeclaredClasses())
                    .filter(c -> c.isEnum() && RaceOutcome.class.isAssignableFrom(c)).toList();
            if (found.size() != 1) {
                throw new IllegalStateException(scenario.getName() + " must declare exactly one outcome enum, has " + found);
            }
            return (Class<? extends Enum<?>>) found.get(0);
        }
    };

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
        return outcome.violation() && outcome.accepts(firedDetectors()) && !actorFailed();
    }

    /** True when an actor raised: a modelling error, classified UNEXPECTED. */
    protected final boolean actorFailed() {
        return actor1.failure() != null || actor2.failure() != null;
    }
}
