package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jetbrains.lincheck.jvm.agent.LincheckInstrumentation;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import vllmrace.lincheck.verdict.LincheckAgent;
import vllmrace.lincheck.verdict.LincheckVerdicts;
import vllmrace.races.Observed;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/**
 * Lincheck's agent stays installed between checks ({@link LincheckAgent}): after a check the model classes it
 * instrumented are still instrumented (with Lincheck's own per-check attach they are retransformed back and the set is
 * emptied), and the check still finds the race.
 */
@DisplayName("Lincheck agent")
class LincheckAgentTest {

    @Test
    @DisplayName("the agent stays installed after a check, and the check still finds the race [Lincheck, reported]")
    void theAgentStaysInstalledAfterACheck() {
        Race race = Race.AbortOfFinishedDelayFreed;
        LincheckVerdicts.Checked checked = LincheckVerdicts.check(race, Variant.REPORTED);
        assertEquals(Observed.BUG_FOUND, checked.verdict().observed(), checked.verdict().headline());
        assertTrue(LincheckAgent.keptForTheJvm(), "Lincheck would attach and detach its agent for every check");
        List<String> modelClasses = LincheckInstrumentation.INSTANCE.getInstrumentedClasses().stream()
                .filter(c -> c.startsWith("vllmrace.model.")).toList();
        assertTrue(modelClasses.contains("vllmrace.model.sched.Scheduler"),
                "after the check the scheduler model is no longer instrumented: " + modelClasses);
    }
}
