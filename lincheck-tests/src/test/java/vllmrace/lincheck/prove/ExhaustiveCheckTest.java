package vllmrace.lincheck.prove;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The bounded-exhaustive checker on a toy counter whose answers are known by hand. */
class ExhaustiveCheckTest {
    private static final Subject COUNTER = new Subject("toy counter", ToyCounter.class, ToyCounter.Spec.class, () -> { });

    @AfterEach
    void resetLimit() {
        ToyCounter.limit = Integer.MAX_VALUE;
    }

    private static ProofResult check(List<Call> t1, List<Call> t2, List<Call> post) {
        Bound bound = new Bound("toy", List.of(List.of()), t1, t1.size(), t2, t2.size(), List.of(post));
        return ExhaustiveCheck.check("toy", COUNTER, List.of(bound));
    }

    @Test
    void aLostUpdateIsNotLinearizableAndTheHistoryShowsTheInterleaving() {
        ProofResult r = check(List.of(Call.of("racyIncrement")), List.of(Call.of("racyIncrement")), List.of());
        assertTrue(r.failed(), r.figures());
        assertTrue(r.counterexample().reason().startsWith("not linearizable"), r.counterexample().reason());
        // both read 0, then both write 1 (depth-first, thread 1 first: the first failing interleaving is this one)
        assertEquals(List.of("1. thread 1: racyIncrement() [racyIncrement: read]",
                "2. thread 2: racyIncrement() [racyIncrement: read]",
                "3. thread 1: racyIncrement() [racyIncrement: write], returns 1",
                "4. thread 2: racyIncrement() [racyIncrement: write], returns 1"), r.counterexample().history());
        assertEquals(1 + 1 + 2, r.histories(), "[] || [] and [] || [inc] once each, then t1 t1 t2 t2 passes and this one fails");
        assertEquals(2, r.counterexample().program().parallelSize(), "the smallest failing program comes first");
    }

    @Test
    void everyInterleavingOfTwoStepOperationsRunsOnce() {
        // two operations of two steps each, one per thread: C(4, 2) = 6 interleavings, plus the programs with fewer calls
        Bound bound = new Bound("toy", List.of(List.of()), List.of(Call.of("slowSet")), 1, List.of(Call.of("slowSet")), 1, List.of(List.of()));
        ProofResult r = ExhaustiveCheck.check("toy", COUNTER, List.of(bound));
        assertFalse(r.failed(), r.figures());
        assertEquals(3, r.programs(), "[] || [], [] || [set], [set] || [set] (the mirror of the second is the same program)");
        assertEquals(1 + 1 + 6, r.histories());
        assertTrue(r.complete());
    }

    @Test
    void anOverlappingReadOfTheOldValueLinearizesBeforeTheWrite() {
        // execution order puts slowSet first, but get ran between its steps: only Wing-Gong's reordering accepts it
        ProofResult r = check(List.of(Call.of("slowSet")), List.of(Call.of("get")), List.of(Call.of("get")));
        assertFalse(r.failed(), () -> r.counterexample().toString());
        assertTrue(r.histories() >= 3, "the get ran before, between and after slowSet's steps: " + r.histories());
    }

    @Test
    void aReadAfterTheWriteEndedMustSeeIt() {
        // with the write's two steps in thread 1 before a get in thread 1, the get must return 7: the spec agrees, the
        // model too; a get that returns the old value after the write ended is caught (toy: increment vs get)
        ProofResult r = check(List.of(Call.of("increment"), Call.of("get")), List.of(Call.of("increment")), List.of(Call.of("get")));
        assertFalse(r.failed(), () -> r.counterexample().toString());
    }

    @Test
    void aBrokenInvariantFailsTheHistoryWithItsMessage() {
        ToyCounter.limit = 1;
        ProofResult r = check(List.of(Call.of("increment")), List.of(Call.of("increment")), List.of());
        assertTrue(r.failed());
        assertNotNull(r.counterexample().invariantBroken());
        assertTrue(r.counterexample().reason().contains("value 2 over 1"), r.counterexample().reason());
        assertTrue(r.counterexample().reason().startsWith("invariant broken: value"), "said once: " + r.counterexample().reason());
    }

    @Test
    void anExceptionIsAResultComparedByClass() {
        ProofResult r = check(List.of(Call.of("fails")), List.of(Call.of("increment")), List.of());
        assertFalse(r.failed(), () -> r.counterexample().toString());
    }

    @Test
    void callsOfOneNonParallelGroupNeverRunOnBothThreads() {
        Bound bound = Bound.of("toy", List.of(), List.of(Call.of("ownerOnly"), Call.of("get")), 1, List.of());
        // mirrored pairs once: [] || [], [] || [o], [] || [g], [o] || [g]; [o] || [o] shares the group; [g] || [g]
        assertEquals(5, bound.programs(ToyCounter.class));
    }

    @Test
    void programsComeFewestParallelCallsFirst() {
        Bound bound = new Bound("toy", List.of(List.of()), List.of(Call.of("get")), 2, List.of(Call.of("increment"), Call.of("get")), 1,
                List.of(List.of()));
        int[] last = {-1};
        long n = bound.forEachProgram(ToyCounter.class, p -> {
            assertTrue(p.parallelSize() >= last[0], "sizes must not decrease: " + p);
            last[0] = p.parallelSize();
            return true;
        });
        assertEquals(3 * 3, n, "thread 1: 0, 1 or 2 gets; thread 2: nothing, an increment or a get");
    }

    @Test
    void badBoundsAreRefusedWithTheirReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Bound("b", List.of(), List.of(Call.of("get")), 1, List.of(Call.of("get")), 1, List.of(List.of())));
        assertTrue(e.getMessage().contains("set-up"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Bound.of("b", List.of(), List.of(), 1, List.of()));
        assertTrue(e.getMessage().contains("calls to choose from"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Depth.whole(0));
        assertTrue(e.getMessage().contains("whole:1 to whole:4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Call.of("nope").nonParallelGroup(ToyCounter.class));
        assertTrue(e.getMessage().contains("has no operation nope/0"), e.getMessage());
    }
}
