package vllmrace.races.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import vllmrace.model.asyncio.YieldCondition;
import vllmrace.races.Race;

/**
 * The frontend races re-derived under each yield condition agree with the registry ({@link Race#needsYield()}, the
 * per-profile expectations) and the orphan question's answer; and the derivation is not vacuous: the three races whose
 * window needs a yield are clean without it, and racy with it.
 */
class FrontendYieldsTest {
    private static final FrontendYields TABLE = FrontendYields.compute();

    private static FrontendYields.Cell cell(String subject, String fixes, YieldCondition condition) {
        return TABLE.cells().stream().filter(c -> c.row().subject().equals(subject) && c.row().fixesLabel().equals(fixes)
                && c.column().condition() == condition).findFirst().orElseThrow();
    }

    @Test
    void everyCellAgreesWithTheRegistry() {
        assertEquals(List.of(), TABLE.mismatches());
        assertEquals(FrontendYields.races().size() * 6 + 5, FrontendYields.rows().size());
        assertEquals(FrontendYields.rows().size() * FrontendYields.columns().size(), TABLE.cells().size());
    }

    @Test
    void theChangedVerdictsAreComputedNotDeclared() {
        // #15326's window exists only with an await between abort_requests and the ABORT send, as its demonstration inserted
        assertFalse(cell("DuplicateIdAbortWindow", "reported", null).racy());
        assertTrue(cell("DuplicateIdAbortWindow", "reported", YieldCondition.AWAIT_INSERTED_BEFORE_SEND).racy());
        assertFalse(cell("DuplicateIdAbortWindow", "reported", YieldCondition.SEND_BACK_PRESSURE).racy(),
                "back-pressure suspends after the send is queued, never before");
        // the stop string's window is the output handler's asyncio.sleep(0) between chunks: real under load
        assertTrue(cell("StopStringLateAbort", "vLLM main, ids not randomized", YieldCondition.OUTPUT_BATCH_OVER_CHUNK).racy());
        assertFalse(cell("StopStringLateAbort", "vLLM main, ids not randomized", null).racy());
        // #15326's ordered abort: its state drop after the send suspends only under back-pressure
        assertTrue(cell("ConcurrentAbortKillsReadd", "reported", YieldCondition.SEND_BACK_PRESSURE).racy());
        assertFalse(cell("ConcurrentAbortKillsReadd", "vLLM main, ids not randomized", YieldCondition.OUTPUT_BATCH_OVER_CHUNK).racy());
        // the orphan: only an inserted await shows it, and the known race on the same set-up is told apart from it
        FrontendYields.Cell main = cell(FrontendYields.QUESTION, "vLLM main", YieldCondition.OUTPUT_BATCH_OVER_CHUNK);
        assertEquals(0, main.orphans());
        assertTrue(main.violating() > 0, "ParentRequestLeakOnAbort shows on the n = 2 point of vLLM main");
        assertTrue(cell(FrontendYields.QUESTION, "every fix", YieldCondition.AWAIT_INSERTED_BEFORE_SEND).orphans() > 0);
    }

    @Test
    void thePageSaysWhatWasComputed(@TempDir Path dir) throws Exception {
        String page = Files.readString(TABLE.write(dir));
        assertTrue(page.contains("every checked cell agrees"), page);
        assertTrue(page.contains("| DuplicateIdAbortWindow | vLLM main, ids not randomized | clean "), page);
        for (YieldCondition condition : YieldCondition.values()) {
            assertTrue(page.contains("| " + condition.label() + " | " + (condition.producedByVllm() ? "yes" : "no") + " |"), condition.name());
        }
    }
}
