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
import vllmrace.races.AllInterleavings;
import vllmrace.races.Race;

/**
 * Runs Lincheck (3.7, model checking) and returns what it found instead of throwing, so tests and the
 * catalogue can assert on it and save its trace. Everything Lincheck-specific lives here.
 *
 * <p>Model checking is bounded and assumes sequential consistency: a clean result means no violation in the
 * interleavings explored, not a proof over all executions.
 */
public final class LincheckRun {
    /**
     * Invocations for a race scenario. Every reported variant so far fails within 15 (see results/); Lincheck
     * 3.7 does not stop when a scenario's few step interleavings are exhausted, so a larger budget mostly
     * re-explores them (the deep profile multiplies it by 10).
     */
    public static final int SCENARIO_BUDGET = 100;

    private LincheckRun() {
    }

    /**
     * Model checks {@code race}'s two actors in parallel, then its arbiter, under {@code fixes}.
     * Each coroutine step is atomic (it runs under the event loop upstream), so Lincheck switches threads
     * only where upstream awaits: the interleavings it explores are the ones asyncio allows.
     */
    public static LincheckResult checkScenario(Race race, FixSet fixes, int budget) {
        ScenarioUnderCheck.configure(race, fixes);
        ExecutionScenario scenario = scenario(List.of(),
                List.of(call(ScenarioUnderCheck.class, "actor1")), List.of(call(ScenarioUnderCheck.class, "actor2")),
                List.of(call(ScenarioUnderCheck.class, "arbiter")));
        ModelCheckingOptions options = modelChecking(budget)
                // the scenario's arbiter runs alone after both threads: nothing to interleave, so its accesses need no
                // tracking (the guarantee must name the scenario classes; on the Lincheck operation it has no effect)
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(LincheckRun::isScenarioClass).methods("arbiter").ignore())
                .iterations(0)
                .addCustomScenario(scenario)
                .sequentialSpecification(ScenarioUnderCheck.SequentialSpecification.class);
        LincheckResult result = check(race.name() + " scenario " + fixes, ScenarioUnderCheck.class, options, budget);
        String last = RunRecorder.lastOutcome();
        if (result.failed() && last != null && race.outcome(last).violation()) {
            // Lincheck stops at the failing invocation: the last one recorded is the counterexample
            result = result.withSteps(RunRecorder.lastSteps(), RunRecorder.lastViolations());
        }
        return result.withCoverage(new LincheckResult.Coverage(RunRecorder.distinctRuns(),
                AllInterleavings.distinctStepSequences(() -> race.scenario(fixes)), RunRecorder.lastNewRunAt()));
    }

    /**
     * Options every check shares. The model's atomic units are declared atomic to Lincheck, so it switches
     * threads only between them: a coroutine step (code between two upstream awaits, run under the event
     * loop) and one EngineCore busy-loop iteration (the engine shares nothing with the frontend but the FIFO
     * sockets, so a finer split of an iteration allows no other outcome). The recorder is outside its view.
     * Every access to shared model state from a Lincheck thread must go through these atomic units: Lincheck
     * does not emulate monitors inside an atomic section.
     */
    public static ModelCheckingOptions modelChecking(int invocationsPerIteration) {
        return new ModelCheckingOptions()
                .invocationsPerIteration(invocationsPerIteration)
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(RunRecorder.class.getName()).allMethods().ignore())
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses("vllmrace.model.asyncio.Coroutine").methods("runNextStep", "isDone").treatAsAtomic())
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses("vllmrace.model.engine.EngineCore").methods("processInputQueue", "runBusyLoopOnce").treatAsAtomic());
    }

    /** The race scenarios and what they delegate to: everything under {@code vllmrace.races}. */
    private static Boolean isScenarioClass(String className) {
        return className.startsWith("vllmrace.races.");
    }

    /** A custom scenario: {@code init} then the two threads in parallel, then {@code post}. */
    public static ExecutionScenario scenario(List<Actor> init, List<Actor> thread1, List<Actor> thread2, List<Actor> post) {
        return new ExecutionScenario(init, List.of(thread1, thread2), post, null);
    }

    /** An operation call for a custom scenario. */
    public static Actor call(Class<?> testClass, String operation, Object... args) {
        for (Method method : testClass.getMethods()) {
            if (method.getName().equals(operation) && method.getParameterCount() == args.length) {
                return new Actor(method, List.of(args));
            }
        }
        throw new IllegalStateException(testClass.getName() + " has no operation " + operation + "/" + args.length);
    }

    /** Scales every budget: {@code -Dvllmrace.lincheck.scale=10} for a deeper (opt-in) run. */
    public static int scaled(int budget) {
        return Math.max(1, budget * Integer.getInteger("vllmrace.lincheck.scale", 1));
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
                report.strip(), full, List.of(), List.of(), LincheckResult.Coverage.UNKNOWN);
    }
}
