package vllmrace.lincheck.connector;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jetbrains.lincheck.datastructures.Operation;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Schedule;
import vllmrace.races.connector.LateLoadCompletionUnionScenario;
import vllmrace.races.connector.SeedThreeInvariant;

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

    public SeedThreeUnderCheck() {
        RunRecorder.countInvocation();
        scenario = new LateLoadCompletionUnionScenario(fixes);
    }

    static void configure(FixSet fixes) {
        SeedThreeUnderCheck.fixes = Objects.requireNonNull(fixes, "fixes");
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
        String schedule = Schedule.fromSteps(scenario, scenario.stepLog().entriesSince(scenario.setupSteps())).actors();
        scenario.arbiter();
        Set<SeedThreeInvariant> broken = EnumSet.noneOf(SeedThreeInvariant.class);
        for (SeedThreeInvariant invariant : SeedThreeInvariant.values()) {
            if (!invariant.holds(scenario.rig().violations())) {
                broken.add(invariant);
            }
        }
        SeedThreeTally.record(schedule, broken);
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
