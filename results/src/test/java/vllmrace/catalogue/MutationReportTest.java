package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** results/mutation.md from PIT's mutations.xml and the equivalents file: the score, reasons, and what is missing. */
class MutationReportTest {
    private static String mutation(String status, String method, int line, String description) {
        return "<mutation detected='" + !status.equals("SURVIVED") + "' status='" + status + "'><sourceFile>S.java</sourceFile>"
                + "<mutatedClass>vllmrace.model.sched.Scheduler</mutatedClass><mutatedMethod>" + method + "</mutatedMethod>"
                + "<lineNumber>" + line + "</lineNumber><mutator>org.pitest.X</mutator><description>" + description + "</description></mutation>";
    }

    private static List<MutationReport.Mutant> mutants(Path dir, String... mutations) throws Exception {
        Path xml = dir.resolve("mutations.xml");
        Files.writeString(xml, "<?xml version='1.0'?><mutations>" + String.join("", mutations) + "</mutations>");
        return MutationReport.parse(xml);
    }

    @Test
    void survivorsWithAReasonAreListedWithIt(@TempDir Path dir) throws Exception {
        List<MutationReport.Mutant> ms = mutants(dir, mutation("KILLED", "schedule", 10, "negated conditional"),
                mutation("TIMED_OUT", "schedule", 11, "removed call"), mutation("SURVIVED", "checkStop", 12, "changed conditional boundary"));
        var s = MutationReport.summarise(ms, MutationReport.equivalents(List.of("# comment", "Scheduler\tcheckStop\tchanged conditional\t1\tstopTokenAt 0 means none")));
        assertEquals(2, s.detected());
        assertEquals(List.of(), s.unexplained());
        assertFalse(s.ok(), "66.7 % is under the target");
        String md = MutationReport.render(s, 5);
        assertTrue(md.contains("| `Scheduler.checkStop:12` | changed conditional boundary | SURVIVED | stopTokenAt 0 means none |"), md);
        assertTrue(md.contains("2 of 3 mutants killed (66.7 %"), md);
    }

    @Test
    void aSurvivorWithoutAReasonOrAReasonWithoutASurvivorFails(@TempDir Path dir) throws Exception {
        List<MutationReport.Mutant> ms = new java.util.ArrayList<>();
        for (int i = 0; i < 19; i++) {
            ms.addAll(mutants(dir, mutation("KILLED", "schedule", i, "negated conditional")));
        }
        ms.addAll(mutants(dir, mutation("NO_COVERAGE", "freeRequest", 40, "removed call")));
        var unexplained = MutationReport.summarise(ms, List.of());
        assertEquals(95.0, unexplained.percent());
        assertEquals(1, unexplained.unexplained().size());
        assertFalse(unexplained.ok());
        var stale = MutationReport.summarise(ms, MutationReport.equivalents(List.of(
                "Scheduler\tfreeRequest\tremoved call\t1\tonly the message", "Scheduler\tschedule\tnegated\t1\tno longer survives")));
        assertEquals(1, stale.stale().size());
        assertFalse(stale.ok());
        var clean = MutationReport.summarise(ms, MutationReport.equivalents(List.of("Scheduler\tfreeRequest\tremoved call\t1\tonly the message")));
        assertTrue(clean.ok());
    }

    /** A reason stands for as many survivors as its count: a new survivor of the same shape has no reason. */
    @Test
    void aReasonCoversOnlyTheSurvivorsItCounts(@TempDir Path dir) throws Exception {
        List<MutationReport.Mutant> ms = mutants(dir, mutation("SURVIVED", "schedule", 10, "negated conditional"),
                mutation("SURVIVED", "schedule", 20, "negated conditional"));
        var one = MutationReport.summarise(ms, MutationReport.equivalents(List.of("Scheduler\tschedule\tnegated\t1\tthe FCFS branch")));
        assertEquals(1, one.explained().size());
        assertEquals(20, one.unexplained().get(0).line(), "the second survivor of that shape has no reason");
        assertFalse(one.ok());
        var two = MutationReport.summarise(ms, MutationReport.equivalents(List.of("Scheduler\tschedule\tnegated\t2\tthe FCFS branch")));
        assertEquals(List.of(), two.unexplained());
        assertEquals(List.of(), two.stale());
        var three = MutationReport.summarise(ms, MutationReport.equivalents(List.of("Scheduler\tschedule\tnegated\t3\tthe FCFS branch")));
        assertEquals(1, three.stale().size(), "it stands for three, two match");
        assertFalse(three.ok());
        assertTrue(MutationReport.render(three, 1).contains("schedule negated (stands for 3)"));
    }

    @Test
    void aMalformedReasonLineIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> MutationReport.equivalents(List.of("Scheduler\tcheckStop\tno reason")));
        assertThrows(IllegalArgumentException.class, () -> MutationReport.equivalents(List.of("Scheduler\tcheckStop\tnegated\tthe text")),
                "no count");
        assertThrows(IllegalArgumentException.class, () -> MutationReport.equivalents(List.of("Scheduler\tcheckStop\tnegated\t0\tthe text")),
                "a count of 0");
    }
}
