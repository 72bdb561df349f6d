package vllmrace.lincheck.connector;

import java.util.Objects;
import org.jetbrains.lincheck.datastructures.Operation;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.fix.FixSet;
import vllmrace.races.connector.LateLoadCompletionScenario;
import vllmrace.races.connector.SeedThreeInvariant;

/**
 * Seed 003's scenario ({@link LateLoadCompletionScenario}) as a Lincheck test class for one matrix cell: the two
 * actors run in parallel, then the arbiter answers whether one {@link SeedThreeInvariant} held. The sequential
 * specification ({@link InvariantHolds}) always answers {@code HOLDS}: any explored interleaving that breaks the
 * invariant is an invalid result. Configured statically before each check (Lincheck runs one check at a time).
 */
public class SeedThreeUnderCheck {
    public static final String HOLDS = "HOLDS";

    private static volatile FixSet fixes;
    private static volatile SeedThreeInvariant invariant;

    private final LateLoadCompletionScenario scenario;

    public SeedThreeUnderCheck() {
        RunRecorder.countInvocation();
        scenario = new LateLoadCompletionScenario(fixes);
    }

    static void configure(FixSet fixes, SeedThreeInvariant invariant) {
        SeedThreeUnderCheck.fixes = Objects.requireNonNull(fixes, "fixes");
        SeedThreeUnderCheck.invariant = Objects.requireNonNull(invariant, "invariant");
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
        scenario.arbiter();
        if (invariant.holds(scenario.rig().violations())) {
            return HOLDS;
        }
        RunRecorder.recordViolatingRun(scenario.stepLog().entriesSince(scenario.setupSteps()),
                scenario.violations().stream().map(Object::toString).toList());
        return "VIOLATED " + invariant.name();
    }

    /** The plain specification: whatever the order, the invariant holds. */
    public static class InvariantHolds {
        public void actor1() {
        }

        public void actor2() {
        }

        public String arbiter() {
            return HOLDS;
        }
    }
}
