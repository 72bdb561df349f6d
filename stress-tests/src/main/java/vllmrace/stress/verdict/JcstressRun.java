package vllmrace.stress.verdict;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jcstress.infra.collectors.DiskReadCollector;
import org.openjdk.jcstress.infra.collectors.InProcessCollector;
import org.openjdk.jcstress.infra.collectors.TestResult;

/**
 * Runs JCStress in a child JVM and reads its results back. JCStress's exit code says nothing useful (0 when
 * no test matched, 0 when a test needs more CPUs than there are), so verdicts come only from the results
 * file, and a test with no results is reported as such, never as clean.
 *
 * <p>The child gets the real class path (JCStress forks its own JVMs with it): the system property
 * {@code vllmrace.jcstress.classpath} when Maven sets it, else this JVM's. It also gets its own working
 * directory (where JCStress always writes {@code jcstress-results-*.bin.gz}).
 */
public final class JcstressRun {
    /**
     * The default build's settings, measured on 2 CPUs. {@code -jvmArgs} drops the JVM-mode matrix
     * (docs/toolchain.md); {@code -fsm 0} drops quick mode's second ("stress") fork; four 100 ms iterations; C1
     * only ({@code TieredStopAtLevel=1}), since the races here are interleavings of lock-protected model code, not
     * JIT-dependent memory effects. Strides of 64 samples, one per epoch: the actors re-synchronise every 64 samples,
     * so an iteration lasts its 100 ms (the default 40 x 256 strides made one last over a second here, our samples
     * being whole model instances), and the actors start together more often, which is where these races' windows
     * are: per test about 1 s instead of 3.7 s (JDK 25), with 5 to 10 times the violating rate. On JDK 17 JCStress
     * still splits every test on +-UseBiasedLocking (two forks); JDK 18 and later have no biased locking, so the child
     * runs on a newer JDK when one is found ({@link JcstressJava}). The deep profile runs the full matrix ({@link #DEEP}).
     */
    public static final List<String> QUICK = List.of("-m", "quick", "-sc", "false", "-fsm", "0", "-iters", "4",
            "-time", "100", "-strideCount", "1", "-strideSize", "64",
            "-jvmArgs", "-XX:+UnlockDiagnosticVMOptions -XX:TieredStopAtLevel=1");

    /**
     * The opt-in deep profile's settings ({@code -Dvllmrace.jcstress.args=deep}): {@link #QUICK}'s strides and iteration
     * time, which suit samples that are whole model instances, but JCStress's full JVM-mode matrix (interpreter, C1,
     * C2, their stress modes), split compilation and the second ("stress") fork. JCStress's own strides and one-second
     * iterations here made the matrix's 686 configurations last over 1 h 45 min on 2 CPUs, with the violating rates
     * 5 to 10 times lower, so that many reported variants needed their relaunches.
     */
    public static final List<String> DEEP = List.of("-m", "quick", "-iters", "4", "-time", "100",
            "-strideCount", "1", "-strideSize", "64");

    /** The value of {@code vllmrace.jcstress.args} that selects {@link #DEEP}. */
    public static final String DEEP_NAME = "deep";

    private final Path workDir;
    private final List<String> modeArgs;
    private final JcstressJava java;

    public JcstressRun(Path workDir, List<String> modeArgs, JcstressJava java) {
        this.workDir = workDir;
        this.modeArgs = List.copyOf(modeArgs);
        this.java = java;
    }

    /**
     * Settings from the system properties {@code vllmrace.jcstress.workdir} and {@code vllmrace.jcstress.args}
     * (space-separated JCStress options, or {@value #DEEP_NAME} for {@link #DEEP}, which the opt-in deep profile sets),
     * defaulting to {@link #QUICK}.
     */
    public static JcstressRun fromSystemProperties() {
        Path workDir = Path.of(System.getProperty("vllmrace.jcstress.workdir", "target/jcstress"));
        return new JcstressRun(workDir, settingsNamed(System.getProperty("vllmrace.jcstress.args", "")), JcstressJava.resolve());
    }

    /** The JCStress options {@code args} stands for: {@link #QUICK} when blank, {@link #DEEP} by name, else the options. */
    static List<String> settingsNamed(String args) {
        String trimmed = args.trim();
        if (trimmed.isEmpty()) {
            return QUICK;
        }
        return trimmed.equals(DEEP_NAME) ? DEEP : Arrays.asList(trimmed.split("\\s+"));
    }

    /** Where the JCStress child runs and writes its console ({@code <report>-console.txt}) and results. */
    public Path workDir() {
        return workDir;
    }

    /** The JCStress options this run uses. */
    public List<String> settings() {
        return modeArgs;
    }

    /** The JDK the JCStress child (and so its forks) runs on. */
    public JcstressJava java() {
        return java;
    }

    /** Runs every JCStress test whose name matches {@code testRegex}, in one launch. */
    public JcstressResults run(String testRegex) throws IOException, InterruptedException {
        return run(testRegex, "report");
    }

    /** As {@link #run(String)}, writing JCStress's HTML report to {@code reportName} in the working directory. */
    public JcstressResults run(String testRegex, String reportName) throws IOException, InterruptedException {
        Files.createDirectories(workDir);
        try (Stream<Path> old = Files.list(workDir)) {
            for (Path p : (Iterable<Path>) old.filter(JcstressRun::isResultsFile)::iterator) {
                Files.delete(p);
            }
        }
        Path report = workDir.resolve(reportName);
        Path console = workDir.resolve(reportName + "-console.txt");
        List<String> command = new ArrayList<>();
        command.add(java.executable().toString());
        command.add("-cp");
        command.add(System.getProperty("vllmrace.jcstress.classpath", System.getProperty("java.class.path")));
        command.add("org.openjdk.jcstress.Main");
        command.addAll(List.of("-t", testRegex));
        command.addAll(modeArgs);
        command.addAll(List.of("-r", report.toString()));
        long start = System.nanoTime();
        Process process = new ProcessBuilder(command)
                .directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(console.toFile())
                .start();
        if (!process.waitFor(60, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException("JCStress did not finish within 60 minutes; console: " + console);
        }
        long wallMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        Path results;
        try (Stream<Path> files = Files.list(workDir)) {
            results = files.filter(JcstressRun::isResultsFile).findFirst().orElse(null);
        }
        Map<String, JcstressTestResult> byTest = new TreeMap<>();
        if (results != null) {
            byTest = read(results);
        }
        return new JcstressResults(testRegex, String.join(" ", modeArgs) + " on " + java, process.exitValue(), wallMillis,
                console, report, byTest);
    }

    private static boolean isResultsFile(Path p) {
        String name = p.getFileName().toString();
        return name.startsWith("jcstress-results-") && name.endsWith(".bin.gz");
    }

    /** Sums every configuration's states per test name. */
    static Map<String, JcstressTestResult> read(Path resultsFile) throws IOException {
        InProcessCollector collector = new InProcessCollector();
        DiskReadCollector reader = new DiskReadCollector(resultsFile.toString(), collector);
        try {
            reader.dump();
        } catch (ClassNotFoundException e) {
            throw new IOException("cannot read " + resultsFile, e);
        } finally {
            reader.close();
        }
        Map<String, JcstressTestResult> byTest = new TreeMap<>();
        for (TestResult result : collector.getTestResults()) {
            JcstressTestResult acc = byTest.computeIfAbsent(result.getName(), JcstressTestResult::new);
            acc.addStatus(result.status().name());
            for (String state : result.getStateKeys()) {
                acc.add(state, result.getCount(state));
            }
            acc.addMessages(result.getMessages());
        }
        return byTest;
    }
}
