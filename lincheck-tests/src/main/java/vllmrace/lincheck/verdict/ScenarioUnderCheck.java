package vllmrace.lincheck.verdict;

import java.util.Objects;
import org.jetbrains.lincheck.datastructures.Operation;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;
import vllmrace.races.RaceScenario;

/**
 * A race's scenario as a Lincheck test class: the two actors are operations run in parallel, the arbiter an
 * operation run after them. Its result is the outcome's name; every sequential order of the actors gives a
 * non-violating outcome, so a violating one shows up as "invalid execution results" with its interleaving.
 *
 * <p>Lincheck builds instances with the no-arg constructor, so {@link LincheckRun} sets the race and fixes
 * before each check (Lincheck runs one check at a time).
 */
public class ScenarioUnderCheck {
    private static volatile Race race;
    private static volatile FixSet fixes;

    private final RaceScenario scenario;
    private final boolean counted;

    public ScenarioUnderCheck() {
        this(true);
    }

    ScenarioUnderCheck(boolean counted) {
        this.counted = counted;
        if (counted) {
            RunRecorder.countInvocation();
        }
        scenario = race.scenario(fixes);
    }

    static void configure(Race race, FixSet fixes) {
        ScenarioUnderCheck.race = Objects.requireNonNull(race, "race");
        ScenarioUnderCheck.fixes = Objects.requireNonNull(fixes, "fixes");
    }

    @Operation
    public void actor1() {
        scenario.actor1().run();
    }

    @Operation
    public void actor2() {
        scenario.actor2().run();
    }

    @Operation
    public String arbiter() {
        String outcome = ((Enum<?>) scenario.arbiter()).name();
        if (counted) {
            // whether the outcome is a violation is decided after the check, outside Lincheck's view
            // (RaceOutcome reads annotations by reflection, which Lincheck sees as non-deterministic)
            RunRecorder.recordRun(scenario.stepLog().entriesSince(scenario.setupSteps()),
                    scenario.violations().stream().map(Object::toString).toList(), outcome);
        }
        return outcome;
    }

    /** The sequential specification: the same scenario, not counted as a model-checking invocation. */
    public static class SequentialSpecification extends ScenarioUnderCheck {
        public SequentialSpecification() {
            super(false);
        }
    }
}
