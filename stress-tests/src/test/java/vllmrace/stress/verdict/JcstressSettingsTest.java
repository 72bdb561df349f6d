package vllmrace.stress.verdict;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@code vllmrace.jcstress.args} selects: the default build's settings, the deep profile's, or options as given. */
class JcstressSettingsTest {
    @Test
    void blankSelectsTheDefaultBuildsSettings() {
        assertEquals(JcstressRun.QUICK, JcstressRun.settingsNamed(""));
        assertEquals(JcstressRun.QUICK, JcstressRun.settingsNamed("  "));
    }

    @Test
    void deepKeepsTheStridesButRunsTheJvmModeMatrix() {
        List<String> deep = JcstressRun.settingsNamed(" deep ");
        assertEquals(JcstressRun.DEEP, deep);
        // -jvmArgs (any) switches JCStress's JVM-mode matrix off; the deep run is there for that matrix
        assertFalse(deep.contains("-jvmArgs"), deep.toString());
        assertFalse(deep.contains("-fsm"), deep.toString());
        assertTrue(deep.containsAll(List.of("-strideCount", "1", "-strideSize", "64")), deep.toString());
        assertTrue(JcstressRun.QUICK.contains("-jvmArgs"), "the default build drops the matrix");
    }

    @Test
    void anythingElseIsPassedToJcstressAsOptions() {
        assertEquals(List.of("-m", "default", "-iters", "2"), JcstressRun.settingsNamed("-m default  -iters 2"));
    }
}
