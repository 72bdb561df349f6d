package vllmrace.lincheck.connector;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * The aggregator's operations against the exactly-once sequential specification. A clean run counts only because the
 * same harness is asserted to fail on upstream's recv union.
 */
class AggregatorLinearizabilityTest {
    private static final int BUDGET = 500;

    @Test
    void sendDedupIsLinearizable() {
        LincheckResult result = AggregatorLinearizability.check(AggregatorLinearizability.Mode.SAVES, FixSet.all(), BUDGET);
        assertTrue(result.invocations() > 0, "vacuous");
        assertFalse(result.failed(), result.report());
    }

    @Test
    void recvUnionIsNotLinearizableUpstream() {
        LincheckResult result = AggregatorLinearizability.check(AggregatorLinearizability.Mode.LOADS,
                FixSet.all().without(Fix.MULTI_CONNECTOR_LOAD_DEDUP), BUDGET);
        assertTrue(result.failed(), "the recv union reports R twice / before the last load: " + result.figures());
    }

    @Test
    void recvDedupIsLinearizable() {
        LincheckResult result = AggregatorLinearizability.check(AggregatorLinearizability.Mode.LOADS, FixSet.all(), BUDGET);
        assertTrue(result.invocations() > 0, "vacuous");
        assertFalse(result.failed(), result.report());
    }
}
