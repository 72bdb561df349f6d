package vllmrace.lincheck.connector;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * The aggregator's operations against the exactly-once sequential specification. LinearizabilityTest runs the CONNECTOR
 * check (both set-ups) with LateLoadCompletionUnion's reported switches (must fail) and with every fix on (must pass);
 * this test isolates the one switch that matters to the aggregator.
 */
class AggregatorLinearizabilityTest {

    /** Upstream's recv union, with only MULTI_CONNECTOR_LOAD_DEDUP off: R is reported before its last load completes. */
    @Test
    void recvUnionIsNotLinearizableWithOnlyLoadDedupOff() {
        LincheckResult result = AggregatorLinearizability.check(AggregatorLinearizability.Mode.LOADS,
                FixSet.all().without(Fix.MULTI_CONNECTOR_LOAD_DEDUP), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "the recv union reports R twice / before the last load: " + result.figures());
    }
}
