package vllmrace.lincheck.connector;

import java.util.Objects;
import org.jetbrains.lincheck.datastructures.Operation;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.fix.FixSet;
import vllmrace.races.connector.LateLoadCompletionUnionScenario;

/**
 * Seed 003's scenario ({@link LateLoadCompletionUnionScenario}) as a Lincheck test class for one fix combination: the two
 * actors run in parallel, then the arbiter runs the system to quiescence and records, in {@link SeedThreeTally}, which
 * of the four {@link SeedThreeInvariant}s the invocation broke. It always answers {@link #CHECKED}, as does the
 * sequential specification ({@link EveryRunChecked}): Lincheck never stops at a violation, so one run explores its
 * whole budget and yields all four invariants. Configured statically before each check (Lincheck runs one check at a
 * time).
 */
public class SeedThreeUnderCheck {
    public static final String CHECKED = "CHECKED";

    private static volatile FixSet fixes;

    private final LateLoadCompletionUnionScenario scenario;
    // in final fields: a read of one is no switch point (see ScenarioUnderCheck)
    private final Coroutine<?> actor1;
    private final Coroutine<?> actor2;

    public SeedThreeUnderCheck() {
        RunRecorder.countInvocation();
        scenario = FixDirectionMatrix.scenario(fixes);
        actor1 = scenario.actor1();
        actor2 = scenario.actor2();
    }

    static void configure(FixSet fixes) {
        SeedThreeUnderCheck.fixes = Objects.requireNonNull(fixes, "fixes");
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
        SeedThreeTally.judge(scenario);
        return CHECKED;
    }

    /** The sequential specification: every invocation is checked; the verdict is in the tally, not the result. */
    public static class EveryRunChecked {
        public void actor1() {
        }

        public void actor2() {
        }

        public String arbiter() {
            return CHECKED;
        }
    }
}
