package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.races.HarnessFault;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.Shard;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;

/**
 * Lincheck's harness self-tests: a broken run (each {@link HarnessFault}), in the variant that races and in the one that
 * is clean, must be a harness error, never the race nor clean (the
 * verdicts themselves are the generated {@code LincheckVerdictsPart1Test} and {@code LincheckVerdictsPart2Test}, through {@link LincheckVerdictCheck}).
 */
@DisplayName("Lincheck self-test")
class LincheckHarnessErrorTest {

    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> brokenSubjects() {
        return java.util.stream.Stream.of(Variant.REPORTED, Variant.FIXED).flatMap(v -> java.util.Arrays.stream(HarnessFault.values())
                .map(f -> org.junit.jupiter.params.provider.Arguments.of(v, f)));
    }

    /** A broken run in the variant that races and in the one that is clean, each fault: a harness error, never the race nor clean. */
    @org.junit.jupiter.params.ParameterizedTest(name = "self-test: {1} is a harness error [Lincheck, {0}]")
    @org.junit.jupiter.params.provider.MethodSource("brokenSubjects")
    void aBrokenRunIsAHarnessErrorNeverTheRaceNorClean(Variant variant, HarnessFault fault) {
        Verdict verdict = harnessError(fault.on(Subject.of(Race.DoubleFreeOnAbortedAsyncSave, variant)));
        assertTrue(verdict.detail().contains("injected fault"), verdict.detail());
    }

    /** Lincheck's verdict on a broken subject, asserted to be a harness error (skipped where another shard owns the race). */
    private static Verdict harnessError(Subject broken) {
        Assumptions.assumeTrue(Shard.current().includes(broken.race()), "another shard's");
        Verdict verdict = vllmrace.lincheck.verdict.LincheckVerdicts.check(broken, LincheckRun.SCENARIO_BUDGET).verdict();
        System.out.println("self-test: " + verdict.headline() + ": " + verdict.detail());
        assertEquals(Observed.HARNESS_ERROR, verdict.observed(), verdict.headline() + "\n" + verdict.detail());
        return verdict;
    }
}
