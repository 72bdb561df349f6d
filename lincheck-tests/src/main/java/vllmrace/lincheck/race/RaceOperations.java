package vllmrace.lincheck.race;

import java.util.Objects;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.OutcomeKind;
import vllmrace.races.Params;
import vllmrace.races.Race;
import vllmrace.races.RaceScenario;

/**
 * A race's two upstream actions as two operations on its own model (the race's scenario: its set-up, its two actors
 * as coroutines, its arbiter), for the races whose component operation set does not (yet) hold their window. The
 * sequential specification is the same model with the actions run one after the other, in either order: so the check
 * asks whether the two actions are atomic with respect to each other. {@link #arbiter()} lets the system run to
 * quiescence and returns what an observer can tell (the run's outcome: {@code clean}, or the violation's name); the
 * invariants are every detector of the model, through the scenario's one judge, validated after the arbiter.
 *
 * <p>Lincheck and the bounded-exhaustive check build instances with the no-arg constructor, after {@link #configure}.
 */
public class RaceOperations {
    /** The arbiter's answer for every run the judge calls clean. */
    static final String CLEAN = "clean";

    private static volatile Race race;
    private static volatile FixSet fixes = FixSet.all();
    private static volatile Configuration configuration = Configuration.DEFAULT;
    private static volatile Params point = Params.DEFAULT;
    /** The race's clean and modelling-error outcome names, read in {@link #configure} (outside a Lincheck run, whose
     * instrumentation hides the outcome annotations from reflection). */
    private static volatile java.util.Set<String> clean = java.util.Set.of();
    private static volatile java.util.Set<String> modellingErrors = java.util.Set.of();

    private final RaceScenario scenario;
    private final Coroutine<?> actor1;
    private final Coroutine<?> actor2;
    private String judged;

    public RaceOperations() {
        this(true);
    }

    RaceOperations(boolean counted) {
        if (counted) {
            RunRecorder.countInvocation();
        }
        scenario = race.scenario(fixes, configuration, point);
        actor1 = scenario.actor1();
        actor2 = scenario.actor2();
    }

    /** The race, its fixes, its configuration and the point of its family to run. */
    public static void configure(Race race, FixSet fixes, Configuration configuration, Params point) {
        RaceOperations.race = Objects.requireNonNull(race, "race");
        RaceOperations.fixes = Objects.requireNonNull(fixes, "fixes");
        RaceOperations.configuration = Objects.requireNonNull(configuration, "configuration");
        RaceOperations.point = Objects.requireNonNull(point, "point");
        RaceOperations.clean = java.util.Arrays.stream(race.outcomes()).filter(o -> o.kind() == OutcomeKind.CLEAN)
                .map(o -> ((Enum<?>) o).name()).collect(java.util.stream.Collectors.toSet());
        RaceOperations.modellingErrors = java.util.Set.of(((Enum<?>) race.modellingError()).name());
    }

    @Operation
    public void actor1() {
        actor1.run();
    }

    @Operation
    public void actor2() {
        actor2.run();
    }

    /** Quiescence, then the outcome: {@code clean}, or the violating outcome's name. */
    @Operation
    public String arbiter() {
        judged = ((Enum<?>) scenario.judge()).name();
        return clean.contains(judged) ? CLEAN : judged;
    }

    @Validate
    public void judgedClean() {
        if (judged == null || clean.contains(judged)) {
            return;
        }
        if (modellingErrors.contains(judged)) {
            throw new IllegalStateException("modelling error (not a race): " + judged + " " + scenario.violations()
                    + (scenario.unexpectedActorFailure() == null ? "" : " " + scenario.unexpectedActorFailure()));
        }
        throw new IllegalStateException("invariant broken: " + scenario.violations());
    }

    /** The sequential specification: the same model, not counted as an invocation. */
    public static class Specification extends RaceOperations {
        public Specification() {
            super(false);
        }
    }
}
