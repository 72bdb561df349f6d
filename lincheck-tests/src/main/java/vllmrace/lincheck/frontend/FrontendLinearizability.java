package vllmrace.lincheck.frontend;

import java.util.List;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import java.util.EnumSet;
import vllmrace.model.asyncio.YieldCondition;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;

/**
 * The frontend's linearizability check: random scenarios of {@link FrontendOperations} (2 threads), each
 * model-checked, results compared with {@link FrontendSpecification}, invariant validated after each part.
 */
public final class FrontendLinearizability {
    /** Random scenarios per check and invocations per scenario (times {@code vllmrace.lincheck.scale}). */
    public static final int ITERATIONS = 2;
    public static final int INVOCATIONS_PER_ITERATION = 60;

    private FrontendLinearizability() {
    }

    /**
     * Every yield condition holding: each declared frontend step is its own, so the check covers the interleavings of
     * every condition at once (more yield points only add interleavings).
     */
    public static final Configuration EVERY_AWAIT_YIELDS = Configuration.DEFAULT.withYields(EnumSet.allOf(YieldCondition.class));

    /** The check under {@code fixes}, with every await suspending ({@link #EVERY_AWAIT_YIELDS}). */
    public static LincheckResult check(FixSet fixes) {
        return check(fixes, EVERY_AWAIT_YIELDS);
    }

    /** The check under {@code fixes} and {@code configuration} (a race's reported cell: its {@code Race.configuration()}). */
    public static LincheckResult check(FixSet fixes, Configuration configuration) {
        FrontendOperations.configure(fixes, configuration);
        int iterations = LincheckRun.scaled(ITERATIONS);
        Class<?> ops = FrontendOperations.class;
        ModelCheckingOptions options = LincheckRun.modelChecking(INVOCATIONS_PER_ITERATION)
                // first the race's own shape (X running; abort(X) against a re-add of X and an engine step),
                // then random scenarios over two ids
                .addCustomScenario(LincheckRun.scenario(
                        List.of(LincheckRun.call(ops, "addRequest", 0), LincheckRun.call(ops, "engineStep")),
                        List.of(LincheckRun.call(ops, "abort", 0)),
                        List.of(LincheckRun.call(ops, "addRequest", 0), LincheckRun.call(ops, "engineStep")),
                        List.of(LincheckRun.call(ops, "outputStep"))))
                .iterations(iterations)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(2)
                .sequentialSpecification(FrontendSpecification.class);
        return LincheckRun.check("frontend linearizability " + fixes + " (" + configuration + ")", FrontendOperations.class, options,
                (iterations + 1) * INVOCATIONS_PER_ITERATION);
    }
}
