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
import vllmrace.races.AllInterleavings;
import vllmrace.races.Subject;

/**
 * Runs Lincheck (3.7, model checking) and returns what it found instead of throwing, so tests and the
 * catalogue can assert on it and save its trace. Everything Lincheck-specific lives here.
 *
 * <p>Model checking is bounded and assumes sequential consistency: a clean result means no violation in the
 * interleavings explored, not a proof over all executions.
 */
public final class LincheckRun {
    /**
     * Invocations for a race scenario at most. The check stops as soon as the invocations have run every step
     * interleaving the scenario has (counted by the enumerator), so a small scenario costs only what its coverage
     * needs; a larger one (hundreds of interleavings, covered in full by the enumerator) runs the whole budget. Every
     * reported variant so far fails within 35 invocations (see results/). The deep profile multiplies it by 10.
     */
    public static final int SCENARIO_BUDGET = 400;

    /**
     * Invocations for a scenario that has more step interleavings than {@link LincheckVerdicts#SMALL_SCENARIO}: Lincheck
     * covers only part of them in any affordable budget, and the step enumerator runs them all.
     */
    public static final int LARGE_SCENARIO_BUDGET = 100;

    /** The budget for a scenario of {@code interleavings} step interleavings, scaled by the deep profile. */
    public static int budgetFor(int interleavings) {
        return scaled(interleavings <= LincheckVerdicts.SMALL_SCENARIO ? SCENARIO_BUDGET : LARGE_SCENARIO_BUDGET);
    }

    private LincheckRun() {
    }

    /**
     * Model checks the subject's two actors in parallel, then its arbiter. Each coroutine step is atomic (it runs
     * under the event loop upstream), so Lincheck switches threads only where upstream awaits: the interleavings it
     * explores are the ones asyncio allows. What each invocation judged is in the result; {@link LincheckVerdicts}
     * reads the verdict from it.
     */
    public static LincheckResult checkScenario(Subject subject, int budget) {
        int interleavings = AllInterleavings.distinctStepSequences(subject::newScenario);
        ScenarioUnderCheck.configure(subject, interleavings);
        ExecutionScenario scenario = scenario(List.of(),
                List.of(call(ScenarioUnderCheck.class, "actor1")), List.of(call(ScenarioUnderCheck.class, "actor2")),
                List.of(call(ScenarioUnderCheck.class, "arbiter")));
        ModelCheckingOptions options = modelChecking(budget)
                // the scenario's arbiter runs alone after both threads: nothing to interleave, so its accesses need no
                // tracking (the guarantee must name the scenario classes; on the Lincheck operation it has no effect)
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(LincheckRun::isScenarioClass).methods("arbiter", "judge").ignore())
                .iterations(0)
                .addCustomScenario(scenario)
                .sequentialSpecification(ScenarioUnderCheck.SequentialSpecification.class);
        LincheckResult result = check(subject.label(), ScenarioUnderCheck.class, options, budget);
        if (RunRecorder.stoppedExploring()) {
            result = result.stoppedByTheSuite();
        }
        return result.withCoverage(new LincheckResult.Coverage(RunRecorder.distinctRuns(), interleavings,
                RunRecorder.lastNewRunAt()));
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
                // a race scenario is three operations and a linearizability counterexample is read as figures: shrinking
                // the failing scenario only re-runs it
                .minimizeFailedScenario(false)
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(RunRecorder.class.getName()).allMethods().ignore())
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses("vllmrace.model.asyncio.Coroutine").methods("runNextStep", "runNextStepIfAny", "isDone").treatAsAtomic())
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
        LincheckAgent.installOnce();
        RunRecorder.reset();
        long start = System.nanoTime();
        LincheckFailure failure = LinCheckerKt.checkImpl(options, testClass);
        long wallMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        String full = failure == null ? "" : failure.toString();
        int detailed = full.indexOf("\nDetailed trace:");
        String report = detailed < 0 ? full : full.substring(0, detailed);
        return new LincheckResult(name, failure != null, RunRecorder.invocations(), budget, wallMillis,
                report.strip(), full, List.of(), List.of(), LincheckResult.Coverage.UNKNOWN, RunRecorder.outcomes(),
                RunRecorder.firstByOutcome(), RunRecorder.last(), RunRecorder.runs());
    }
}
