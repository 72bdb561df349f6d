package vllmrace.catalogue.drift;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/** Comment-only and blank-line edits are not drift; code, decorator, docstring and indentation edits are. */
class FingerprintTest {
    private static final String STEP = String.join("\n",
            "def step(self):",
            "    \"\"\"Schedule, execute, and make output.\"\"\"",
            "    scheduler_output = self.scheduler.schedule()",
            "    return self.model_executor.execute_model(scheduler_output)");

    @Test
    void isTheFirst16HexOfTheSha256OfTheNormalisedText() {
        // expected values from Python's hashlib over the normalised text
        assertEquals("8795b1c438f59538", Fingerprint.of("def f():\n    return 1"));
        assertEquals("ea3b5b172f85bfcb", Fingerprint.of(String.join("\n",
                "@torch.inference_mode()",
                "",
                "def step(self):   ",
                "    # comment",
                "    return self.model_executor.execute_model()")));
    }

    @Test
    void blankLinesCommentLinesAndTrailingWhitespaceDoNotCount() {
        String edited = String.join("\n",
                "def step(self):  ",
                "    \"\"\"Schedule, execute, and make output.\"\"\"",
                "",
                "    # Check for any requests remaining in the scheduler",
                "    scheduler_output = self.scheduler.schedule()\t",
                "        # a comment at another indentation",
                "",
                "    return self.model_executor.execute_model(scheduler_output)",
                "");
        assertEquals(Fingerprint.of(STEP), Fingerprint.of(edited));
        assertEquals(Fingerprint.of(STEP), Fingerprint.of(STEP.replace("\n", "\r\n")));
    }

    @Test
    void codeEditsCount() {
        assertNotEquals(Fingerprint.of(STEP), Fingerprint.of(STEP.replace("schedule()", "schedule(budget)")));
        assertNotEquals(Fingerprint.of(STEP),
                Fingerprint.of(STEP.replace("(scheduler_output)", "(scheduler_output)  # now with a comment")),
                "an end-of-line comment is on a code line: the line changed");
    }

    @Test
    void decoratorEditsCount() {
        assertNotEquals(Fingerprint.of(STEP), Fingerprint.of("@torch.inference_mode()\n" + STEP));
    }

    @Test
    void docstringAndIndentationEditsCount() {
        assertNotEquals(Fingerprint.of(STEP), Fingerprint.of(STEP.replace("make output", "make outputs")));
        assertNotEquals(Fingerprint.of(STEP), Fingerprint.of(STEP.replace("\n    return", "\n        return")));
    }
}
