package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.races.scheduler.AbortLosesToFinalStepScenario;

/** A declared clean ending holds only when every fact does and each actor ended as declared. */
class EndingTest {
    private static final RaceOutcome CLEAN = AbortLosesToFinalStepScenario.Outcome.COMPLETED;

    @Test
    void holdsOnlyWhenEveryFactHolds() {
        boolean[] second = {true};
        Ending ending = new Ending(CLEAN, List.of(new Ending.Fact("base", () -> true))).and("second", () -> second[0]);
        assertTrue(ending.holds(null, null));
        second[0] = false;
        assertFalse(ending.holds(null, null));
        assertEquals(List.of("base", "second"), ending.facts().stream().map(Ending.Fact::what).toList());
    }

    @Test
    void anActorsRaiseRulesTheEndingOutUnlessDeclared() {
        Ending plain = new Ending(CLEAN, List.of());
        assertFalse(plain.holds(null, new IllegalStateException("x")));
        assertFalse(plain.holds(new IllegalStateException("x"), null));
        Ending raises = new Ending(CLEAN, List.of()).actor2Raises(IllegalArgumentException.class);
        assertTrue(raises.holds(null, new IllegalArgumentException("already running")));
        assertFalse(raises.holds(null, null), "declared to raise, but returned");
        assertFalse(raises.holds(null, new IllegalStateException("other")), "another exception is a modelling error");
    }

    @Test
    void anEndingIsACleanOutcome() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Ending(AbortLosesToFinalStepScenario.Outcome.ABORT_OVERTAKEN, List.of()));
        assertTrue(e.getMessage().contains("@Clean"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Ending(RaceOutcome.UNEXPECTED, List.of()));
    }
}
