package vllmrace.stress.verdict;

import java.nio.file.Path;
import java.util.Map;

/**
 * What one JCStress launch produced: per-test results read back from its results file, plus what is needed
 * to explain a missing one (exit code, console log).
 */
public record JcstressResults(String testRegex, String settings, int exitCode, long wallMillis, Path console,
                              Path htmlReport, Map<String, JcstressTestResult> byTest) {

    /** The results of one test, or null when JCStress produced none for it. */
    public JcstressTestResult get(String testName) {
        return byTest.get(testName);
    }
}
