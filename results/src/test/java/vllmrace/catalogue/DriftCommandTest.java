package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

/** {@code ./catalogue --drift}: bad input is refused before anything runs; a checkout without the pins reports each gone. */
class DriftCommandTest {

    @Test
    void aPathThatIsNotAVllmCheckoutIsRefused(@TempDir Path dir) throws Exception {
        DriftException missing = assertThrows(DriftException.class, () -> new DriftCommand(dir.resolve("nope")).run());
        assertTrue(missing.getMessage().startsWith("no such directory: "), missing.getMessage());
        DriftException notVllm = assertThrows(DriftException.class, () -> new DriftCommand(dir).run());
        assertTrue(notVllm.getMessage().contains("is not a vLLM checkout"), notVllm.getMessage());
    }

    @Test
    void aCheckoutWithoutThePinnedFilesReportsThemGoneWithTheirRaces(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("vllm/v1"));
        Files.writeString(dir.resolve("vllm/__init__.py"), "");
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true));
        int status;
        try {
            status = new DriftCommand(dir).run();
        } finally {
            System.setOut(original);
        }
        String text = captured.toString();
        assertEquals(1, status);
        assertTrue(text.contains(UpstreamPin.values().length + " pins: 0 unchanged, 0 changed, " + UpstreamPin.values().length + " gone"), text);
        assertTrue(text.contains("Scheduler.update_from_output (gone, model Scheduler.updateFromOutput): "), text);
        assertTrue(text.contains("DoubleFreeOnAbortedAsyncSave"), text);
    }
}
