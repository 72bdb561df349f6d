package vllmrace.lincheck.verdict;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.LinCheckerKt;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.kotlinx.lincheck.strategy.LincheckFailure;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;

/**
 * Runs Lincheck (3.7, model checking) and returns what it found instead of throwing, so tests and the
 * catalogue can assert on it and save its trace. Everything Lincheck-specific lives here.
 *
 * <p>Model checking is bounded and assumes sequential consistency: a clean result means no violation in the
 * interleavings explored, not a proof over all executions.
 */
public final class LincheckRun {
    /** Invocations for a race scenario: the reported variants fail within a few dozen; see results/. */
    public static final int SCENARIO_BUDGET = 300;

    private LincheckRun() {
    }

    /**
     * Model checks {@code race}'s two actors in parallel, then its arbiter, under {@code fixes}.
     * Each coroutine step is atomic (it runs under the event loop upstream), so Lincheck switches threads
     * only where upstream awaits: the interleavings it explores are the ones asyncio allows.
     */
    public static LincheckResult checkScenario(Race race, FixSet fixes, int budget) {
        ScenarioUnderCheck.configure(race, fixes);
        ExecutionScenario scenario = new ExecutionScenario(
                List.of(),
                List.of(List.of(actor(ScenarioUnderCheck.class, "actor1")), List.of(actor(ScenarioUnderCheck.class, "actor2"))),
                List.of(actor(ScenarioUnderCheck.class, "arbiter")),
                null);
        ModelCheckingOptions options = modelChecking(budget)
                .iterations(0)
                .addCustomScenario(scenario)
                .sequentialSpecification(ScenarioUnderCheck.SequentialSpecification.class);
        return check(race.name() + " scenario " + fixes, ScenarioUnderCheck.class, options, budget);
    }

    /** Options every check shares: atomic coroutine steps, and the recorder outside Lincheck's view. */
    public static ModelCheckingOptions modelChecking(int invocationsPerIteration) {
        return new ModelCheckingOptions()
                .invocationsPerIteration(invocationsPerIteration)
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(RunRecorder.class.getName()).allMethods().ignore())
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses("vllmrace.model.asyncio.Coroutine").methods("runNextStep", "isDone").treatAsAtomic());
    }

    /** Runs one configured check; {@code budget} is the total invocations it may use (for the figures). */
    public static LincheckResult check(String name, Class<?> testClass, ModelCheckingOptions options, int budget) {
        RunRecorder.reset();
        long start = System.nanoTime();
        LincheckFailure failure = LinCheckerKt.checkImpl(options, testClass);
        long wallMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        String full = failure == null ? "" : failure.toString();
        int detailed = full.indexOf("\nDetailed trace:");
        String report = detailed < 0 ? full : full.substring(0, detailed);
        return new LincheckResult(name, failure != null, RunRecorder.invocations(), budget, wallMillis,
                report.strip(), full, failure == null ? List.of() : RunRecorder.violatingSteps(),
                failure == null ? List.of() : RunRecorder.violations());
    }

    private static Actor actor(Class<?> testClass, String operation) {
        try {
            Method method = testClass.getMethod(operation);
            return new Actor(method, List.of());
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(testClass.getName() + " has no operation " + operation, e);
        }
    }
}
