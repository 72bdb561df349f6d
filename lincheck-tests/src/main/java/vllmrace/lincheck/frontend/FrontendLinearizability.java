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
        return check(fixes, EVERY_AWAIT_YIELDS, TestAsyncConnector.SavePolicy.ALWAYS, vllmrace.races.frontend.FrontendYields.races());
    }

    /**
     * A race's reported cell: its shape first, under its own configuration ({@code Race.configuration()}) and
     * connector: the async-saving one only for the race that needs a delay-freed request, so that every other race's
     * cell fails on its own invariant rather than on DelayFreedIdReuse's collision.
     */
    public static LincheckResult check(FixSet fixes, Race focus) {
        return check(fixes, focus.configuration(), savePolicy(focus), List.of(focus));
    }

    /** The connector a race's reported cell runs: async-saving only for DelayFreedIdReuse. */
    static TestAsyncConnector.SavePolicy savePolicy(Race race) {
        return race == Race.DelayFreedIdReuse ? TestAsyncConnector.SavePolicy.ALWAYS : TestAsyncConnector.SavePolicy.NEVER;
    }

    /** The check under {@code fixes}, {@code configuration} and connector: the shapes of {@code races} first, then random ones. */
    public static LincheckResult check(FixSet fixes, Configuration configuration, TestAsyncConnector.SavePolicy savePolicy, List<Race> races) {
        FrontendOperations.configure(fixes, configuration, savePolicy);
        int iterations = LincheckRun.scaled(ITERATIONS);
        ModelCheckingOptions options = LincheckRun.modelChecking(INVOCATIONS_PER_ITERATION);
        races.forEach(race -> options.addCustomScenario(shape(race)));
        options.iterations(iterations)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(2)
                .sequentialSpecification(FrontendSpecification.class);
        return LincheckRun.check("frontend linearizability " + fixes + " (" + configuration + ")", FrontendOperations.class, options,
                (iterations + races.size()) * INVOCATIONS_PER_ITERATION);
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
            case CollectorMergesChunkBoundary -> LincheckRun.scenario(List.of(call("addSession", 0), call("engineStep")),
                    List.of(call("engineStep")), List.of(call("outputStep"), call("take", 0)), List.of());
            default -> throw new IllegalArgumentException(race + " is not a frontend race");
        };
    }

    private static org.jetbrains.kotlinx.lincheck.Actor call(String operation, Object... args) {
        return LincheckRun.call(OPS, operation, args);
    }
}
