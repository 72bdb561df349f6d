package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.races.Variant;

/**
 * Every linearizability check, both ways: with its race's reported switches it must FAIL (so the checker is
 * shown to find the race); with every fix ON it must pass in every interleaving it explored (bounded).
 */
class LinearizabilityTest {

    @ParameterizedTest(name = "{0} linearizability, reported variant fails")
    @EnumSource(LinearizabilityCheck.class)
    void reportedVariantIsNotLinearizable(LinearizabilityCheck check) {
        LincheckResult result = check.run(Variant.REPORTED);
        System.out.println(result.check() + ": " + result.figures());
        assertTrue(result.failed(), check + " passed with " + check.race() + " as reported: " + result.figures());
    }

    @ParameterizedTest(name = "{0} linearizability, fixed variant passes")
    @EnumSource(LinearizabilityCheck.class)
    void fixedVariantIsLinearizableInEveryExploredInterleaving(LinearizabilityCheck check) {
        LincheckResult result = check.run(Variant.FIXED);
        System.out.println(result.check() + ": " + result.figures());
        assertTrue(result.invocations() > 0, "vacuous: no invocation ran");
        assertFalse(result.failed(), result.report());
    }
}
