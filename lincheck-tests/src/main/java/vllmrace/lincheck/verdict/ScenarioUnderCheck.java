package vllmrace.lincheck.verdict;

import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.jetbrains.lincheck.datastructures.Operation;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.races.OutcomeKind;
import vllmrace.races.RaceScenario;
import vllmrace.races.Subject;

/**
 * A race's scenario as a Lincheck test class: the two actors are operations run in parallel, the arbiter an
 * operation run after them. Its result is the judged outcome's name; every sequential order of a reported variant's
 * actors gives a non-violating outcome, so a violating one shows up as "invalid execution results" with its
 * interleaving. Every invocation is also recorded ({@link RunRecorder}), so a verdict never rests on Lincheck's
 * comparison alone: a modelling error or an arbiter that throws is seen even where the sequential specification
 * agrees with it.
 *
 * <p>Lincheck builds instances with the no-arg constructor, so {@link LincheckRun} sets the subject before each check
 * (Lincheck runs one check at a time).
 */
public class ScenarioUnderCheck {
    /** The result of an invocation whose arbiter threw. */
    static final String ARBITER_THREW = "ARBITER_THREW";

    private static volatile Subject subject;
    private static volatile int stopAtDistinctRuns;
    private static volatile Set<String> cleanOutcomes = Set.of();
    private static volatile Set<String> modellingErrors = Set.of();
    /** Every invocation answers {@link #CHECKED}: Lincheck explores its whole budget and the verdict is the tally's. */
    private static volatile boolean tallyOnly;
    private static volatile Set<String> violatingOutcomes = Set.of();
    private static volatile boolean stopAtFirstViolation;
    static final String CHECKED = "CHECKED";

    /**
     * Thrown by the arbiter once the invocations have run every distinct step sequence the scenario has, or once one
     * ended in a modelling error: Lincheck 3.7 cannot be told to stop, but an operation result no sequential run gives
     * makes it stop there. {@link LincheckRun} reads such a stop as the suite's, never as a failure; the verdict comes
     * from the recorded invocations.
     */
    static final class StopExploring extends RuntimeException {
        StopExploring() {
            super("the suite stopped the exploration (every distinct step sequence run, or a modelling error)", null, false, false);
        }
    }

    private final RaceScenario scenario;
    // the actors in final fields: a read of one is no switch point, so an actor's first switch point is its first step
    private final Coroutine<?> actor1;
    private final Coroutine<?> actor2;
    private final boolean counted;

    public ScenarioUnderCheck() {
        this(true);
    }

    ScenarioUnderCheck(boolean counted) {
        this.counted = counted;
        if (counted) {
            RunRecorder.countInvocation();
        }
        scenario = subject.newScenario();
        actor1 = scenario.actor1();
        actor2 = scenario.actor2();
    }

    /** The subject of the next check; with {@code stopAt > 0}, stop once that many distinct step sequences ran. */
    static void configure(Subject subject, int stopAt) {
        ScenarioUnderCheck.subject = Objects.requireNonNull(subject, "subject");
        ScenarioUnderCheck.stopAtDistinctRuns = stopAt;
        // read here, outside the check: the outcome annotations are read by reflection
        ScenarioUnderCheck.cleanOutcomes = Arrays.stream(subject.race().outcomes())
                .filter(o -> o.kind() == OutcomeKind.CLEAN).map(o -> ((Enum<?>) o).name()).collect(Collectors.toSet());
        ScenarioUnderCheck.modellingErrors = Set.of(((Enum<?>) subject.race().modellingError()).name());
        // a partial closer is judged over every invocation: one that breaks only what it leaves must not stop the check
        ScenarioUnderCheck.tallyOnly = !subject.tolerated().isEmpty();
        ScenarioUnderCheck.violatingOutcomes = Arrays.stream(subject.race().outcomes())
                .filter(o -> o.kind() == OutcomeKind.VIOLATING).map(o -> ((Enum<?>) o).name()).collect(Collectors.toSet());
        ScenarioUnderCheck.stopAtFirstViolation = subject.race().window() != vllmrace.races.Window.INTERLEAVING && !tallyOnly;
    }

    @Operation
    public void actor1() {
        actor1.run();
    }

    @Operation
    public void actor2() {
        actor2.run();
    }

    @Operation
    public String arbiter() {
        String outcome;
        try {
            outcome = ((Enum<?>) scenario.judge()).name();
        } catch (RuntimeException e) {
            outcome = ARBITER_THREW + ": " + e;
        }
        if (counted) {
            RuntimeException failure = scenario.unexpectedActorFailure();
            RunRecorder.recordRun(scenario.stepLog().entriesSince(scenario.setupSteps()),
                    scenario.violations().stream().map(Object::toString).toList(),
                    scenario.violations().stream().map(v -> v.kind().invariant()).collect(Collectors.toSet()), outcome,
                    failure == null ? null : failure.toString());
            // stop on a clean invocation once every interleaving ran (Lincheck replays the stopping invocation, which
            // stops again); a violating or broken one must fail as itself, with its own trace
            if (cleanOutcomes.contains(outcome) && stopAtDistinctRuns > 0 && RunRecorder.distinctRuns() >= stopAtDistinctRuns) {
                RunRecorder.stopExploring();
                throw new StopExploring();
            }
            // a race whose window is not an interleaving (a sequential order gives its violation) is one Lincheck never
            // fails: its first violating invocation decides the verdict, so there is nothing further to explore
            if (stopAtFirstViolation && violatingOutcomes.contains(outcome)) {
                RunRecorder.stopExploring();
                throw new StopExploring();
            }
            // a modelling error decides the verdict (a harness error): nothing further to explore
            if (modellingErrors.contains(outcome) || outcome.startsWith(ARBITER_THREW)) {
                RunRecorder.stopExploring();
                throw new StopExploring();
            }
        }
        return tallyOnly ? CHECKED : outcome;
    }

    /** The sequential specification: the same scenario, not counted as a model-checking invocation. */
    public static class SequentialSpecification extends ScenarioUnderCheck {
        public SequentialSpecification() {
            super(false);
        }
    }
}
