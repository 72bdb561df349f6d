package vllmrace.model.dp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;

/** The DP deployment's ordinary course, and bad input refused with its state intact. */
class DpDeploymentTest {

    private static void quiesce(DpDeployment dp) {
        for (int i = 0; i < 8 && dp.iterate(); i++) {
            // lockstep iterations until no rank steps
        }
    }

    @Test
    void aRequestRunsAWaveOnBothRanksAndTheWaveEnds() {
        DpDeployment dp = new DpDeployment(FixSet.all(), Configuration.DEFAULT);
        dp.addRequest("X", 2);
        assertTrue(dp.clientEnginesRunning(), "FIRST_REQ: the client's stats task sets it at once");
        quiesce(dp);
        dp.checkQuiescence();
        assertTrue(dp.violations().isEmpty(), dp.violations().toString());
        assertFalse(dp.clientEnginesRunning(), "wave_complete: the drain returns");
        assertEquals(1, dp.coordinator().currentWave());
        assertTrue(dp.scheduler().requestsSnapshot().stream().allMatch(r -> r.isFinished() && r.numOutputTokens() == 2));
    }

    @Test
    void aRequestWhilePausedIsHeldAndRunsOnResume() {
        DpDeployment dp = new DpDeployment(FixSet.all(), Configuration.DEFAULT);
        dp.pauseGeneration();
        quiesce(dp);
        dp.addRequest("X", 1);
        quiesce(dp);
        assertEquals(1, dp.rank(DpDeployment.CHOSEN_ENGINE).held());
        dp.checkQuiescence();
        assertTrue(dp.violations().isEmpty(), "with #51481 the drain returns while X is held: " + dp.violations());
        dp.resumeGeneration();
        quiesce(dp);
        assertEquals(0, dp.rank(DpDeployment.CHOSEN_ENGINE).held());
        assertTrue(dp.scheduler().requestsSnapshot().stream().allMatch(r -> r.isFinished()));
        assertTrue(dp.violations().isEmpty(), dp.violations().toString());
    }

    /**
     * The hunt's candidate (every fix, [add] || [pause, resume], then the drain: rank 0 stepping alone on a stale START) is
     * a program vLLM cannot run: pause_generation returns only at the ranks' consensus, whose wave end makes that START
     * stale. A resume before it is refused and changes nothing; after consensus the same program is clean.
     */
    @Test
    void aResumeBeforeThePauseReachedConsensusIsRefusedAndChangesNothing() {
        DpDeployment dp = new DpDeployment(FixSet.all(), Configuration.DEFAULT);
        dp.addRequest("X", 1);
        dp.pauseGeneration();
        String before = dp.toString();
        IllegalStateException refused = assertThrows(IllegalStateException.class, dp::resumeGeneration);
        assertTrue(refused.getMessage().startsWith("resume_generation while a pause is in flight"), refused.getMessage());
        assertEquals(before, dp.toString(), "a refused resume changes nothing");
        assertTrue(dp.iterate(), "the ranks step to the pause's consensus");
        dp.resumeGeneration();
        quiesce(dp);
        dp.checkQuiescence();
        assertTrue(dp.violations().isEmpty(), "after consensus the old START is stale: no rank steps alone: " + dp.violations());
    }

    @Test
    void badInputIsRefusedWithTheStateIntact() {
        DpDeployment dp = new DpDeployment(FixSet.all(), Configuration.DEFAULT);
        assertThrows(IllegalArgumentException.class, () -> dp.addRequest("", 1));
        assertThrows(IllegalArgumentException.class, () -> dp.addRequest("X", 0));
        assertThrows(IllegalArgumentException.class, () -> dp.coordinator().frontendWake(2, 0));
        assertThrows(IllegalArgumentException.class, () -> dp.coordinator().frontendWake(0, -1));
        assertFalse(dp.clientEnginesRunning());
        assertFalse(dp.coordinator().enginesRunning());
        assertFalse(dp.iterate(), "nothing was added: no rank steps");
        assertTrue(dp.violations().isEmpty());
    }
}
