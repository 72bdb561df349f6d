package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.Shard;
import vllmrace.races.Subject;
import vllmrace.races.Variant;
import vllmrace.races.Verdict;

/**
 * Lincheck's harness self-test: a reported variant whose actor 1 raises must be a harness error, never the race (the
 * verdicts themselves are the generated {@code LincheckVerdictsPart1Test} and {@code LincheckVerdictsPart2Test}, through {@link LincheckVerdictCheck}).
 */
@DisplayName("Lincheck self-test")
class LincheckHarnessErrorTest {

    /** A reported variant whose actor 1 raises: a harness error, never the race. */
    @Test
    @DisplayName("self-test: an actor that raises is a harness error, not the race [Lincheck, reported]")
    void anActorThatRaisesIsAHarnessErrorNotTheRace() {
        Verdict verdict = harnessError(Subject.of(Race.DoubleFreeOnAbortedAsyncSave, Variant.REPORTED).withActorFault());
        assertTrue(verdict.detail().contains("injected fault"), verdict.detail());
    }

    /** A reported variant whose every run also trips a detector the race does not declare: a harness error, never the race. */
    @Test
    @DisplayName("self-test: a stray detector is a harness error, not the race [Lincheck, reported]")
    void aStrayDetectorIsAHarnessErrorNotTheRace() {
        Verdict verdict = harnessError(Subject.of(Race.DoubleFreeOnAbortedAsyncSave, Variant.REPORTED).withStrayDetector());
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
