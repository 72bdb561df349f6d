package vllmrace.stress.verdict;

import java.nio.file.Path;
import java.util.Map;

/**
 * What one JCStress launch produced: per-test results read back from its results file, plus what is needed
 * to explain a missing one (exit code, console log).
 */
public record JcstressResults(String testRegex, String settings, int exitCode, long wallMillis, Path console,
                              Path htmlReport, Map<String, JcstressTestResult> byTest) {

    /** These results plus a later launch's: counts of a test run in both are summed. */
    public JcstressResults plus(JcstressResults later) {
        java.util.Map<String, JcstressTestResult> merged = new java.util.TreeMap<>(byTest);
        later.byTest.forEach((name, result) -> {
            JcstressTestResult mine = merged.get(name);
            if (mine == null) {
                merged.put(name, result);
            } else {
                mine.mergeFrom(result);
            }
        });
        return new JcstressResults(testRegex, settings, exitCode, wallMillis + later.wallMillis, console, htmlReport, merged);
    }

    /** The results of one test, or null when JCStress produced none for it. */
    public JcstressTestResult get(String testName) {
        return byTest.get(testName);
    }
}
