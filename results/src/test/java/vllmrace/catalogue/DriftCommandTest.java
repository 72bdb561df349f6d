package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import vllmrace.catalogue.drift.DriftException;
import vllmrace.model.upstream.UpstreamPin;

/** {@code ./catalogue --drift}: bad input is refused before anything runs; a partial checkout reports its absent files missing. */
class DriftCommandTest {

    @Test
    void aPathThatIsNotAVllmCheckoutIsRefused(@TempDir Path dir) throws Exception {
        DriftException missing = assertThrows(DriftException.class, () -> new DriftCommand(dir.resolve("nope")).run());
        assertTrue(missing.getMessage().startsWith("no such directory: "), missing.getMessage());
        DriftException notVllm = assertThrows(DriftException.class, () -> new DriftCommand(dir).run());
        assertTrue(notVllm.getMessage().contains("is not a vLLM checkout"), notVllm.getMessage());
    }

    @Test
    void aCheckoutWithNoneOfThePinnedFilesIsRefused(@TempDir Path dir) throws Exception {
        vllmCheckout(dir);
        DriftException none = assertThrows(DriftException.class, () -> new DriftCommand(dir).run());
        assertTrue(none.getMessage().contains(" holds none of the ") && none.getMessage().endsWith("nothing to check"), none.getMessage());
    }

    @Test
    void aPartialCheckoutReportsTheAbsentFilesMissingWithoutRacesAndGoneFunctionsWithTheirs(@TempDir Path dir) throws Exception {
        vllmCheckout(dir);
        Path scheduler = dir.resolve(UpstreamPin.SCHEDULER_SCHEDULE.file());
        Files.createDirectories(scheduler.getParent());
        Files.writeString(scheduler, "class Scheduler:\n    def schedule(self):\n        return None\n");
        long inFile = java.util.Arrays.stream(UpstreamPin.values()).filter(p -> p.file().equals(UpstreamPin.SCHEDULER_SCHEDULE.file())).count();
        int n = UpstreamPin.values().length;
        String[] status = new String[1];
        String text = captured(() -> status[0] = String.valueOf(new DriftCommand(dir).run()));
        assertEquals("1", status[0]); // schedule changed, the file's other functions are gone: drift, exit 1
        assertTrue(text.contains(n + " pins: 0 unchanged, 1 changed, " + (inFile - 1) + " gone, " + (n - inFile)
                + " not checked (file not in the checkout)"), text);
        assertTrue(text.contains("MISSING"), text);
        assertTrue(text.contains("not checked: vllm/v1/engine/core.py is not in this checkout"), text);
        assertTrue(text.contains("changed since 00024d31 (no diff: that commit is not in this checkout); the model already mirrors #35781, #45357, #48245, #49675, #50297 on top of it"), text);
        assertTrue(text.contains("Scheduler.update_from_output (gone, model Scheduler.updateFromOutput): "), text);
        assertTrue(text.contains("DoubleFreeOnAbortedAsyncSave"), text);
        String races = text.substring(text.indexOf("Races to re-check:"));
        assertFalse(races.contains("EngineCore.step"), races); // a missing file asks for no re-check
        assertFalse(races.contains("AsyncLLM."), races);
    }

    @Test
    void aMissingPinnedTextDirectoryIsRefused(@TempDir Path dir) throws Exception {
        vllmCheckout(dir);
        DriftException e = assertThrows(DriftException.class, () -> new DriftCommand(dir, dir.resolve("pins")).run());
        assertEquals("no such directory for the pinned texts: " + dir.resolve("pins"), e.getMessage());
    }

    private static void vllmCheckout(Path dir) throws Exception {
        Files.createDirectories(dir.resolve("vllm/v1"));
        Files.writeString(dir.resolve("vllm/__init__.py"), "");
    }

    private interface Body {
        void run() throws Exception;
    }

    private static String captured(Body body) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true));
        try {
            body.run();
        } finally {
            System.setOut(original);
        }
        return captured.toString();
    }
}
