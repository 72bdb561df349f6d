package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** JCStress's console, read for progress: excerpts of a real 0.16 console (redirected, non-verbose) and its \r form. */
class JcstressProgressTest {

    private static String fixture(String name) throws IOException {
        try (InputStream in = JcstressProgressTest.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void midRunTheLastStatusBlockAndTheLastReportedTestCount() throws IOException {
        JcstressProgress.Status s = JcstressProgress.parse(fixture("jcstress-console-midrun.txt"));
        assertEquals(77, s.planned());
        assertEquals(5, s.done());
        assertEquals("in 00:01:14", s.eta());
        assertEquals("vllmrace.stress.scheduler.AsyncFreeUnderInFlightStep.Reported", s.lastTest());
        assertEquals("JCStress: 5 of 77 tests done, elapsed 1:23, ETA in 00:01:14; last reported: "
                + "scheduler.AsyncFreeUnderInFlightStep.Reported", s.line(83_000));
    }

    @Test
    void theSummaryAfterTheRunIsNotReadAsProgress() throws IOException {
        JcstressProgress.Status s = JcstressProgress.parse(fixture("jcstress-console-end.txt"));
        assertEquals(77, s.done());
        assertEquals("now", s.eta());
        assertNull(s.lastTest(), "the tests listed under RUN RESULTS are a summary, not the last one run");
    }

    @Test
    void aTerminalStyleLineRewrittenAfterCarriageReturnsAndFailuresAreCounted() {
        String console = "(ETA: in 00:00:40; at x) (Sampling Rate: 1 K/sec) (JVMs: 0 starting, 1 running, 0 finishing) (CPUs: 2 configured, 2 allocated) (Results: 10 planned; 2 passed, 0 failed, 0 soft errs, 0 hard errs)\r"
                + "(ETA: in 00:00:30; at x) (Sampling Rate: 1 K/sec) (JVMs: 0 starting, 1 running, 0 finishing) (CPUs: 2 configured, 2 allocated) (Results: 10 planned; 3 passed, 1 failed, 0 soft errs, 1 hard errs)\r"
                + "........ [FAILED] vllmrace.stress.frontend.X.Fixed\r";
        JcstressProgress.Status s = JcstressProgress.parse(console);
        assertEquals(5, s.done());
        assertEquals("in 00:00:30", s.eta());
        assertEquals("vllmrace.stress.frontend.X.Fixed", s.lastTest());
        assertTrue(s.line(1_000).contains("5 of 10 tests done (2 failed or in error)"), s.line(1_000));
    }

    @Test
    void beforeAnyStatusItSaysItIsStarting() {
        JcstressProgress.Status s = JcstressProgress.parse("Java Concurrency Stress Tests\n----- [OK] Trying to set global affinity\n");
        assertFalse(s.known());
        assertNull(s.lastTest());
        assertTrue(s.line(4_000).startsWith("JCStress: starting"), s.line(4_000));
    }

    @Test
    void theWatcherPrintsFromTheConsoleBeingWritten(@TempDir Path dir) throws Exception {
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        try (JcstressProgress.Watcher w = new JcstressProgress.Watcher(dir, 50, lines::add)) {
            Files.writeString(dir.resolve("report-console.txt"), fixture("jcstress-console-midrun.txt"));
            long until = System.nanoTime() + 5_000_000_000L;
            while (lines.stream().noneMatch(l -> l.contains("5 of 77")) && System.nanoTime() < until) {
                Thread.sleep(20);
            }
        }
        assertTrue(lines.stream().anyMatch(l -> l.contains("5 of 77 tests done")), lines.toString());
    }
}
