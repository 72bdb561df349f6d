package vllmrace.model.detect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The drain's bound: a state that never settles is a modelling error unless EngineCore already died at an assert. */
class SettleTest {
    @Test
    void aStateThatSettlesReturnsTheSettledIterations() {
        AtomicInteger n = new AtomicInteger();
        assertEquals(Settle.SETTLED_ITERATIONS, Settle.run(n::incrementAndGet, () -> String.valueOf(Math.min(n.get(), 5))));
        assertEquals(5 + Settle.SETTLED_ITERATIONS, n.get(), "it runs until k iterations in a row change nothing");
    }

    @Test
    void aLiveEngineThatNeverSettlesIsAModellingError() {
        AtomicInteger n = new AtomicInteger();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Settle.run(n::incrementAndGet, () -> String.valueOf(n.get()), () -> false, () -> false));
        assertTrue(e.getMessage().contains("no quiescence"), e.getMessage());
        assertEquals(Settle.MAX_ITERATIONS, n.get());
    }

    @Test
    void aDeadEngineThatNeverSettlesEndsTheDrainWithNoLivenessToJudge() {
        AtomicInteger n = new AtomicInteger();
        assertEquals(0, Settle.run(n::incrementAndGet, () -> String.valueOf(n.get()), () -> false, () -> true));
        assertEquals(Settle.MAX_ITERATIONS, n.get());
    }
}
