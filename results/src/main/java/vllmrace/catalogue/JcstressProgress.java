package vllmrace.catalogue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Progress of a JCStress launch, read from JCStress's own console ({@code <workdir>/<report>-console.txt}, where
 * {@link vllmrace.stress.verdict.JcstressRun} redirects it). JCStress 0.16 prints a status block (on a terminal one line
 * rewritten after {@code \r}; redirected, as here, lines at most every 15 s) ending in {@code (Results: N planned; P passed,
 * F failed, S soft errs, H hard errs)}, with {@code (ETA: ...)} before it, and a {@code [OK] vllmrace....} line for each
 * test it prints: without {@code -v} only the tests with an interesting or failing outcome, as each ends. So the test
 * named is the last one JCStress reported, not the one running (non-verbose JCStress does not name that).
 */
final class JcstressProgress {
    private static final Pattern RESULTS = Pattern.compile(
            "\\(Results: (\\d+) planned; (\\d+) passed, (\\d+) failed, (\\d+) soft errs, (\\d+) hard errs\\)");
    private static final Pattern ETA = Pattern.compile("\\(ETA: ([^;)]*)");
    private static final Pattern TEST = Pattern.compile("\\[(OK|FAILED|ERROR|[A-Z_ ]+)\\] (vllmrace\\.[\\w.$]+)");

    /** What the console said last; {@code planned} is -1 before JCStress printed any status. */
    record Status(int planned, int passed, int failed, int softErrors, int hardErrors, String eta, String lastTest) {
        int done() {
            return passed + failed + softErrors + hardErrors;
        }

        boolean known() {
            return planned >= 0;
        }

        /** {@code JCStress: 12 of 77 tests done (1 failed), elapsed 1:23, ETA in 00:01:18; last reported: X.Reported}. */
        String line(long elapsedMillis) {
            if (!known()) {
                return "JCStress: starting (probing the machine and its JVMs), elapsed " + Progress.clock(elapsedMillis);
            }
            int errors = failed + softErrors + hardErrors;
            return "JCStress: " + done() + " of " + planned + " tests done" + (errors == 0 ? "" : " (" + errors + " failed or in error)")
                    + ", elapsed " + Progress.clock(elapsedMillis) + (eta == null ? "" : ", ETA " + eta)
                    + (lastTest == null ? "" : "; last reported: " + lastTest.replaceFirst("^vllmrace\\.stress\\.", ""));
        }
    }

    private JcstressProgress() {
    }

    /** The last status in a console text (lines split on {@code \r} or {@code \n}), or an unknown status. */
    static Status parse(String console) {
        int planned = -1;
        int passed = 0;
        int failed = 0;
        int soft = 0;
        int hard = 0;
        String eta = null;
        String last = null;
        for (String line : console.split("[\r\n]+")) {
            Matcher r = RESULTS.matcher(line);
            if (r.find()) {
                planned = Integer.parseInt(r.group(1));
                passed = Integer.parseInt(r.group(2));
                failed = Integer.parseInt(r.group(3));
                soft = Integer.parseInt(r.group(4));
                hard = Integer.parseInt(r.group(5));
            }
            Matcher e = ETA.matcher(line);
            if (e.find()) {
                eta = e.group(1).trim();
            }
            Matcher t = TEST.matcher(line);
            if (t.find() && line.stripLeading().startsWith(".")) {
                last = t.group(2);
            }
            if (line.startsWith("RUN RESULTS:")) {
                break; // the summary after the run re-lists tests: not progress
            }
        }
        return new Status(planned, passed, failed, soft, hard, eta, last);
    }

    /**
     * Prints a progress line every {@code periodMillis} while a launch runs, from the newest {@code *console.txt} in
     * {@code workDir} written since the watcher started (a relaunch writes its own). Close it when the launch ends.
     */
    static final class Watcher implements AutoCloseable {
        private final Thread thread;
        private volatile boolean stopped;

        Watcher(Path workDir, long periodMillis, Consumer<String> out) {
            long start = System.currentTimeMillis();
            long startNanos = System.nanoTime();
            thread = new Thread(() -> {
                while (!stopped) {
                    try {
                        Thread.sleep(periodMillis);
                    } catch (InterruptedException e) {
                        return;
                    }
                    if (!stopped) {
                        Path console = newestConsole(workDir, start);
                        String text = "";
                        try {
                            text = console == null ? "" : Files.readString(console, java.nio.charset.StandardCharsets.ISO_8859_1);
                        } catch (IOException e) {
                            // the file is being replaced: the next tick reads it
                        }
                        out.accept(parse(text).line((System.nanoTime() - startNanos) / 1_000_000));
                    }
                }
            }, "jcstress-progress");
            thread.setDaemon(true);
            thread.start();
        }

        private static Path newestConsole(Path dir, long since) {
            try (Stream<Path> files = Files.list(dir)) {
                return files.filter(p -> p.getFileName().toString().endsWith("console.txt"))
                        .filter(p -> p.toFile().lastModified() >= since - 1000)
                        .max(java.util.Comparator.comparingLong(p -> p.toFile().lastModified())).orElse(null);
            } catch (IOException e) {
                return null;
            }
        }

        @Override
        public void close() {
            stopped = true;
            thread.interrupt();
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
