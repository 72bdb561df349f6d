package vllmrace.lincheck.frontend;

import java.util.EnumSet;
import java.util.List;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.model.asyncio.YieldCondition;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;

/**
 * The frontend's linearizability check: random scenarios of {@link FrontendOperations} (2 threads), each model-checked,
 * results compared with {@link FrontendSpecification}, the invariants validated after each part. A race's reported cell
 * tries that race's own shape first ({@link #shape}), then the random scenarios.
 */
public final class FrontendLinearizability {
    /** Random scenarios per check and invocations per scenario (times {@code vllmrace.lincheck.scale}). */
    public static final int ITERATIONS = 2;
    public static final int INVOCATIONS_PER_ITERATION = 60;
    /**
     * Every yield condition holding: each declared frontend step is its own, so the check covers the interleavings of
     * every condition at once (more yield points only add interleavings).
     */
    public static final Configuration EVERY_AWAIT_YIELDS = Configuration.DEFAULT.withYields(EnumSet.allOf(YieldCondition.class));

    private static final Class<?> OPS = FrontendOperations.class;

    private FrontendLinearizability() {
    }

    /**
     * The check under {@code fixes}, with every await suspending ({@link #EVERY_AWAIT_YIELDS}): every frontend race's
     * shape, then random scenarios.
     */
    public static LincheckResult check(FixSet fixes) {
        List<Race> asyncLlm = vllmrace.races.frontend.FrontendYields.races().stream().filter(r -> !DP_RACES.contains(r)).toList();
        LincheckResult frontend = check(fixes, EVERY_AWAIT_YIELDS, TestAsyncConnector.SavePolicy.ALWAYS, asyncLlm);
        if (frontend.failed()) {
            return frontend;
        }
        LincheckResult dp = checkDp(fixes, Configuration.DEFAULT, DP_RACES);
        if (dp.failed()) {
            return dp;
        }
        return LincheckResult.allPassed("frontend linearizability " + fixes + " (AsyncLLM, every await suspending; data-parallel)",
                List.of(frontend, dp));
    }

    /** The data-parallel races: checked on {@link DpOperations} against {@link DpSpecification}. */
    public static final List<Race> DP_RACES = List.of(Race.DpPauseLatchStuck, Race.StaleWaveWakesPausedRank);

    /** The data-parallel part: the races' shapes first, then random scenarios of client, pause, resume and ranks. */
    static LincheckResult checkDp(FixSet fixes, Configuration configuration, List<Race> races) {
        DpOperations.configure(fixes, configuration);
        return run("frontend linearizability, data-parallel " + fixes, DpOperations.class, DpSpecification.class, races, 2, 1);
    }

    /**
     * Model checking of {@code operations} against {@code specification}: the shapes of {@code races} first, then random
     * scenarios of two threads of {@code perThread} operations, {@code around} before and after.
     */
    private static LincheckResult run(String name, Class<?> operations, Class<?> specification, List<Race> races, int perThread, int around) {
        int iterations = LincheckRun.scaled(ITERATIONS);
        ModelCheckingOptions options = LincheckRun.modelChecking(INVOCATIONS_PER_ITERATION);
        races.forEach(race -> options.addCustomScenario(shape(race)));
        options.iterations(iterations).threads(2).actorsPerThread(perThread).actorsBefore(around).actorsAfter(around)
                .sequentialSpecification(specification);
        return LincheckRun.check(name, operations, options, (iterations + races.size()) * INVOCATIONS_PER_ITERATION);
    }

    /**
     * A race's reported cell: its shape first, under its own configuration ({@code Race.configuration()}) and
     * connector: the async-saving one only for the race that needs a delay-freed request, so that every other race's
     * cell fails on its own invariant rather than on DelayFreedIdReuse's collision.
     */
    public static LincheckResult check(FixSet fixes, Race focus) {
        if (DP_RACES.contains(focus)) {
            return checkDp(fixes, focus.configuration(), List.of(focus));
        }
        return check(fixes, focus.configuration(), savePolicy(focus), List.of(focus));
    }

    /** The connector a race's reported cell runs: async-saving only for DelayFreedIdReuse. */
    static TestAsyncConnector.SavePolicy savePolicy(Race race) {
        return race == Race.DelayFreedIdReuse ? TestAsyncConnector.SavePolicy.ALWAYS : TestAsyncConnector.SavePolicy.NEVER;
    }

    /** The check under {@code fixes}, {@code configuration} and connector: the shapes of {@code races} first, then random ones. */
    public static LincheckResult check(FixSet fixes, Configuration configuration, TestAsyncConnector.SavePolicy savePolicy, List<Race> races) {
        FrontendOperations.configure(fixes, configuration, savePolicy);
        return run("frontend linearizability " + fixes + " (" + configuration + ")", FrontendOperations.class,
                FrontendSpecification.class, races, 3, 2);
    }

    /** Every AsyncLLM call of the bounded-exhaustive check, over one request id (the races are about one id's reuse). */
    public static final List<vllmrace.lincheck.prove.Call> ALPHABET = List.of(pc("addRequest", 0), pc("addParallel", 0),
            pc("addStop", 0), pc("addSession", 0), pc("take", 0), pc("abort", 0), pc("cancel", 0), pc("engineStep"),
            pc("transfersComplete"), pc("outputStep"));
    /** Every data-parallel call of the bounded-exhaustive check. */
    public static final List<vllmrace.lincheck.prove.Call> DP_ALPHABET = List.of(pc("addRequest"), pc("pause"), pc("resume"),
            pc("ranksStep"), pc("drainAfterQuiescence"));

    private static vllmrace.lincheck.prove.Call pc(String method, Object... args) {
        return vllmrace.lincheck.prove.Call.of(method, args);
    }

    /**
     * The bounded-exhaustive check under {@code fixes} and {@code configuration} (null: every await suspending, the
     * async-saving connector; with a focus race, that race's connector): AsyncLLM within each AsyncLLM race's shape,
     * then data parallelism within each DP race's shape; the focus race's shape first.
     */
    public static List<vllmrace.lincheck.prove.Proof> proofs(FixSet fixes, Configuration configuration, Race focus,
                                                             vllmrace.lincheck.prove.Depth depth) {
        Configuration asyncLlmConf = configuration == null ? EVERY_AWAIT_YIELDS : configuration;
        Configuration dpConf = configuration == null ? Configuration.DEFAULT : configuration;
        TestAsyncConnector.SavePolicy policy = focus == null ? TestAsyncConnector.SavePolicy.ALWAYS : savePolicy(focus);
        List<Race> asyncLlm = new java.util.ArrayList<>(vllmrace.races.frontend.FrontendYields.races().stream()
                .filter(r -> !DP_RACES.contains(r)).toList());
        List<Race> dp = new java.util.ArrayList<>(DP_RACES);
        java.util.Comparator<Race> focusFirst = java.util.Comparator.comparing(r -> r != focus);
        asyncLlm.sort(focusFirst);
        dp.sort(focusFirst);
        var frontend = new vllmrace.lincheck.prove.Proof(new vllmrace.lincheck.prove.Subject("frontend " + fixes + " (" + asyncLlmConf + ", saves " + policy + ")",
                FrontendOperations.class, FrontendSpecification.class, () -> FrontendOperations.configure(fixes, asyncLlmConf, policy)),
                asyncLlm.stream().map(r -> vllmrace.lincheck.prove.Proof.shapeBound(r.name(), shape(r), ALPHABET, depth)).toList());
        var dataParallel = new vllmrace.lincheck.prove.Proof(new vllmrace.lincheck.prove.Subject("frontend, data-parallel " + fixes,
                DpOperations.class, DpSpecification.class, () -> DpOperations.configure(fixes, dpConf)),
                dp.stream().map(r -> vllmrace.lincheck.prove.Proof.shapeBound(r.name(), shape(r), DP_ALPHABET, depth)).toList());
        return focus != null && DP_RACES.contains(focus) ? List.of(dataParallel, frontend) : List.of(frontend, dataParallel);
    }

    /** A race's own shape: its set-up as the initial part, its two actors as the threads, EngineCore after. */
    static ExecutionScenario shape(Race race) {
        return switch (race) {
            case DuplicateIdAbortWindow -> LincheckRun.scenario(List.of(call("addRequest", 0), call("engineStep")),
                    List.of(call("abort", 0)), List.of(call("addRequest", 0), call("engineStep")), List.of(call("outputStep")));
            case StopStringLateAbort -> LincheckRun.scenario(List.of(call("addStop", 0), call("engineStep")),
                    List.of(call("outputStep")), List.of(call("addRequest", 0)), List.of(call("engineStep")));
            case DelayFreedIdReuse -> LincheckRun.scenario(List.of(call("addRequest", 0), call("engineStep")),
                    List.of(call("cancel", 0), call("engineStep")), List.of(call("addRequest", 0)), List.of(call("engineStep")));
            case ConcurrentAbortKillsReadd -> LincheckRun.scenario(List.of(call("addRequest", 0), call("engineStep")),
                    List.of(call("cancel", 0)), List.of(call("abort", 0), call("addRequest", 0)), List.of(call("engineStep")));
            case ParentRequestLeakOnAbort -> LincheckRun.scenario(List.of(call("addParallel", 0), call("engineStep")),
                    List.of(call("outputStep")), List.of(call("abort", 0)), List.of());
            case DpPauseLatchStuck -> LincheckRun.scenario(List.of(), List.of(dp("pause"), dp("ranksStep")), List.of(dp("addRequest")),
                    List.of(dp("drainAfterQuiescence")));
            case StaleWaveWakesPausedRank -> LincheckRun.scenario(List.of(), List.of(dp("addRequest"), dp("ranksStep")), List.of(dp("pause")),
                    List.of(dp("drainAfterQuiescence")));
            case CollectorMergesChunkBoundary -> LincheckRun.scenario(List.of(call("addSession", 0), call("engineStep")),
                    List.of(call("engineStep")), List.of(call("outputStep"), call("take", 0)), List.of());
            default -> throw new IllegalArgumentException(race + " is not a frontend race");
        };
    }

    private static org.jetbrains.kotlinx.lincheck.Actor dp(String operation) {
        return LincheckRun.call(DpOperations.class, operation);
    }

    private static org.jetbrains.kotlinx.lincheck.Actor call(String operation, Object... args) {
        return LincheckRun.call(OPS, operation, args);
    }
}
