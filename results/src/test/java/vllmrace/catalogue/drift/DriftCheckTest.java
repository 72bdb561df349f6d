package vllmrace.catalogue.drift;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import vllmrace.catalogue.drift.Result.Status;

/** Pins checked against a made-up vLLM checkout, with the pinned file's text from a lambda (or from git). */
class DriftCheckTest {
    private static final String FILE = "vllm/v1/core/sched/scheduler.py";
    private static final String COMMIT = "00024d3127e1a9d3c8b2f0e4a5b6c7d8e9f01234";
    private static final String QUALNAME = "Scheduler.update_from_output";

    /** The scheduler as it was at the pin's commit. */
    private static final String PINNED = String.join("\n",
            "from collections import defaultdict",
            "",
            "",
            "class Scheduler(SchedulerInterface):",
            "",
            "    def __init__(self, vllm_config):",
            "        self.vllm_config = vllm_config",
            "        self.running: list[Request] = []",
            "",
            "    def update_from_output(",
            "        self,",
            "        scheduler_output: SchedulerOutput,",
            "        model_runner_output: ModelRunnerOutput,",
            "    ) -> dict[int, EngineCoreOutputs]:",
            "        sampled_token_ids = model_runner_output.sampled_token_ids",
            "        outputs: dict[int, list[EngineCoreOutput]] = defaultdict(list)",
            "        for request in self.running:",
            "            req_index = model_runner_output.req_id_to_index[request.request_id]",
            "            generated_token_ids = sampled_token_ids[req_index]",
            "            request.append_output_token_ids(generated_token_ids)",
            "        return outputs",
            "",
            "    def finish_requests(self, request_ids, finished_status):",
            "        for req_id in request_ids:",
            "            self.requests.pop(req_id, None)",
            "");

    @TempDir
    Path checkout;

    @BeforeEach
    void makeCheckout() throws IOException {
        Files.createDirectories(checkout.resolve("vllm/v1/core/sched"));
        Files.writeString(checkout.resolve("vllm/__init__.py"), "");
    }

    private void write(String source) throws IOException {
        Files.writeString(checkout.resolve(FILE), source);
    }

    private static Pin pin(String file, String qualname, String source) {
        return new Pin(file, qualname, COMMIT, Fingerprint.of(PythonSource.find(source, qualname).orElseThrow().text()));
    }

    private static final Pin PIN = pin(FILE, QUALNAME, PINNED);

    private Result checkOne(Pin pin, Function<Pin, Optional<String>> provider) throws DriftException {
        List<Result> results = new DriftCheck(checkout, provider).check(List.of(pin));
        assertEquals(1, results.size());
        assertEquals(pin, results.get(0).pin());
        return results.get(0);
    }

    private Result checkOne(Pin pin) throws DriftException {
        return checkOne(pin, p -> Optional.of(PINNED));
    }

    @Test
    void unchangedAtTheSameLines() throws Exception {
        write(PINNED);
        Result r = checkOne(PIN);
        assertEquals(Status.UNCHANGED, r.status());
        assertEquals("unchanged since 00024d31", r.detail());
    }

    @Test
    void unchangedWhenMovedByCodeAboveAndEditedOnlyInComments() throws Exception {
        write(PINNED
                .replace("    def update_from_output(", String.join("\n",
                        "    def add_request(self, request: Request) -> None:",
                        "        self.waiting.add_request(request)",
                        "        self.requests[request.request_id] = request",
                        "",
                        "    def update_from_output("))
                .replace("        return outputs", "        # NOTE: outputs are grouped by client\n\n        return outputs"));
        Result r = checkOne(PIN);
        assertEquals(Status.UNCHANGED, r.status(), r.detail());
        assertEquals("unchanged since 00024d31 (now at lines 14-27)", r.detail());
        assertEquals(0, DriftCheck.exitCode(List.of(r)));
    }

    @Test
    void unchangedWithACommentAddedInsideGivesTheNewLineRange() throws Exception {
        write(PINNED.replace("        return outputs", "        # grouped by client\n        return outputs"));
        Result r = checkOne(PIN);
        assertEquals(Status.UNCHANGED, r.status(), r.detail());
        assertEquals("unchanged since 00024d31 (now at lines 10-22)", r.detail());
    }

    @Test
    void goneWhenTheClassWasRenamedNamingTheClassThatHasTheDef() throws Exception {
        write(PINNED.replace("class Scheduler(", "class V1Scheduler("));
        Result r = checkOne(PIN);
        assertEquals(Status.GONE, r.status());
        assertEquals("Scheduler.update_from_output not found in vllm/v1/core/sched/scheduler.py;"
                + " a def update_from_output exists under V1Scheduler", r.detail());
        assertEquals(1, DriftCheck.exitCode(List.of(r)));
    }

    @Test
    void goneWhenTheFunctionWasDeleted() throws Exception {
        String source = PINNED;
        int from = source.indexOf("    def update_from_output(");
        int to = source.indexOf("    def finish_requests(");
        write(source.substring(0, from) + source.substring(to));
        Result r = checkOne(PIN);
        assertEquals(Status.GONE, r.status());
        assertEquals("Scheduler.update_from_output not found in vllm/v1/core/sched/scheduler.py", r.detail());
    }

    @Test
    void aFileNotInTheCheckoutIsMissingNotGoneAndFailsNothing() throws Exception {
        write(PINNED);
        Pin elsewhere = new Pin("vllm/v1/core/scheduler.py", QUALNAME, COMMIT, PIN.fingerprint());
        Result r = checkOne(elsewhere);
        assertEquals(Status.MISSING, r.status());
        assertEquals("not checked: vllm/v1/core/scheduler.py is not in this checkout", r.detail());
        assertFalse(r.status().moved());
        assertEquals(0, DriftCheck.exitCode(List.of(r, checkOne(PIN))));
    }

    @Test
    void aPinsPlusPrsArePrintedWhetherTheFunctionChangedOrNot() throws Exception {
        Pin plus = new Pin(FILE, QUALNAME, COMMIT, PIN.fingerprint(), List.of("#48245", "#50297"));
        write(PINNED);
        assertEquals("unchanged since 00024d31; the model adds #48245, #50297 from their diffs, which this function does "
                + "not have here", checkOne(plus).detail());
        write(PINNED.replace("    def update_from_output(", "    @torch.inference_mode()\n    def update_from_output("));
        Result changed = checkOne(plus);
        assertEquals(Status.CHANGED, changed.status());
        assertTrue(changed.detail().startsWith("changed since 00024d31; the model already mirrors #48245, #50297 on top of "
                + "it (from their diffs): a change of theirs is not drift\n--- vllm/v1/core/sched/scheduler.py@00024d31\n"), changed.detail());
        assertTrue(changed.detail().contains("\n+    @torch.inference_mode()\n"), changed.detail());
        assertEquals("vllm/v1/core/sched/scheduler.py@00024d31 + #48245, #50297 (from their diffs)", plus.version());
    }

    @Test
    void aPinsPlusPrsMustReadHashNumberOnce() {
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> new Pin(FILE, QUALNAME, COMMIT, PIN.fingerprint(), List.of("48245")));
        assertEquals("a pin's plus PR must read #N: 48245 (Scheduler.update_from_output)", bad.getMessage());
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> new Pin(FILE, QUALNAME, COMMIT, PIN.fingerprint(), List.of("#1", "#1")));
        assertEquals("a pin names a plus PR twice: [#1, #1] (Scheduler.update_from_output)", twice.getMessage());
    }

    @Test
    void pinnedTextsFromADirectoryGiveTheDiffWithoutGit(@TempDir Path pinnedDir) throws Exception {
        write(PINNED.replace("defaultdict(list)", "defaultdict(dict)"));
        Path byShort = pinnedDir.resolve("00024d31").resolve(FILE);
        Files.createDirectories(byShort.getParent());
        Files.writeString(byShort, PINNED);
        Result r = DriftCheck.withPinnedDirectory(checkout, pinnedDir).check(List.of(PIN)).get(0);
        assertEquals(Status.CHANGED, r.status());
        assertTrue(r.detail().startsWith("--- " + FILE + "@00024d31\n"), r.detail());
        assertTrue(r.detail().contains("\n+        outputs: dict[int, list[EngineCoreOutput]] = defaultdict(dict)\n"), r.detail());

        Pin otherCommit = new Pin(FILE, QUALNAME, "1234567890123456789012345678901234567890", PIN.fingerprint());
        assertEquals("changed since 12345678 (no diff: that commit is not in this checkout)",
                DriftCheck.withPinnedDirectory(checkout, pinnedDir).check(List.of(otherCommit)).get(0).detail());
        Path nowhere = pinnedDir.resolve("nowhere");
        DriftException e = assertThrows(DriftException.class, () -> DriftCheck.withPinnedDirectory(checkout, nowhere));
        assertEquals("no such directory for the pinned texts: " + nowhere, e.getMessage());
    }

    @Test
    void changedWhenADecoratorWasAddedWithTheDiffShowingIt() throws Exception {
        write(PINNED.replace("    def update_from_output(", "    @torch.inference_mode()\n    def update_from_output("));
        Result r = checkOne(PIN);
        assertEquals(Status.CHANGED, r.status());
        assertEquals(String.join("\n",
                "--- vllm/v1/core/sched/scheduler.py@00024d31",
                "+++ vllm/v1/core/sched/scheduler.py (checkout)",
                "@@ -1,3 +1,4 @@",
                "+    @torch.inference_mode()",
                "     def update_from_output(",
                "         self,",
                "         scheduler_output: SchedulerOutput,"), r.detail());
        assertEquals(1, DriftCheck.exitCode(List.of(r)));
    }

    @Test
    void changedWithoutThePinnedTextSaysThereIsNoDiff() throws Exception {
        write(PINNED.replace("defaultdict(list)", "defaultdict(dict)"));
        String expected = "changed since 00024d31 (no diff: that commit is not in this checkout)";
        Result nothing = checkOne(PIN, p -> Optional.empty());
        assertEquals(Status.CHANGED, nothing.status());
        assertEquals(expected, nothing.detail());
        Result notInPinnedText = checkOne(PIN, p -> Optional.of("def unrelated():\n    pass\n"));
        assertEquals(Status.CHANGED, notInPinnedText.status());
        assertEquals(expected, notInPinnedText.detail());
    }

    @Test
    void aLongDiffIsCappedAtFortyLines() throws Exception {
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < 60; i++) {
            body.append("        self.step_").append(i).append("()\n");
        }
        write(PINNED.replace("        return outputs", body + "        return outputs"));
        Result r = checkOne(PIN);
        assertEquals(Status.CHANGED, r.status());
        List<String> lines = r.detail().lines().toList();
        assertEquals(40, lines.size());
        assertEquals("... (28 more lines)", lines.get(39)); // 2 headers + 1 hunk header + 3 + 60 + 1 context = 67
    }

    @Test
    void aPinWhoseFingerprintIsNotThatOfItsCommitSaysSo() throws Exception {
        write(PINNED);
        Pin wrong = new Pin(FILE, QUALNAME, COMMIT, "ffffffffffffffff");
        Result r = checkOne(wrong);
        assertEquals(Status.CHANGED, r.status());
        assertEquals("the pin's fingerprint ffffffffffffffff is not that of Scheduler.update_from_output at 00024d31 ("
                + PIN.fingerprint() + ")", r.detail());
    }

    @Test
    void thePinnedFileIsAskedForOncePerCommitAndFile() throws Exception {
        write(PINNED);
        AtomicInteger calls = new AtomicInteger();
        List<Result> results = new DriftCheck(checkout, p -> {
            calls.incrementAndGet();
            return Optional.of(PINNED);
        }).check(List.of(PIN, pin(FILE, "Scheduler.finish_requests", PINNED), pin(FILE, "Scheduler.__init__", PINNED)));
        assertEquals(List.of(Status.UNCHANGED, Status.UNCHANGED, Status.UNCHANGED),
                results.stream().map(Result::status).toList());
        assertEquals(1, calls.get());
    }

    @Test
    void exitCodeIsOneWhenAnyPinChangedOrIsGone() {
        Result unchanged = new Result(PIN, Status.UNCHANGED, "unchanged since 00024d31");
        assertEquals(0, DriftCheck.exitCode(List.of()));
        assertEquals(0, DriftCheck.exitCode(List.of(unchanged, unchanged)));
        assertEquals(1, DriftCheck.exitCode(List.of(unchanged, new Result(PIN, Status.CHANGED, "d"))));
        assertEquals(1, DriftCheck.exitCode(List.of(new Result(PIN, Status.GONE, "d"), unchanged)));
        assertEquals(0, DriftCheck.exitCode(List.of(new Result(PIN, Status.MISSING, "d"), unchanged)));
    }

    @Test
    void aMissingPathIsNoSuchDirectory() {
        Path missing = checkout.resolve("no-such-checkout");
        DriftException e = assertThrows(DriftException.class, () -> DriftCheck.forCheckout(missing));
        assertEquals("no such directory: " + missing, e.getMessage());
    }

    @Test
    void aFileIsNoSuchDirectory() throws IOException {
        Path file = Files.writeString(checkout.resolve("setup.py"), "");
        DriftException e = assertThrows(DriftException.class, () -> new DriftCheck(file, p -> Optional.empty()));
        assertEquals("no such directory: " + file, e.getMessage());
    }

    @Test
    void aDirectoryWithoutVllmIsNotACheckout() throws IOException {
        Path docs = Files.createDirectories(checkout.resolve("docs"));
        DriftException e = assertThrows(DriftException.class, () -> DriftCheck.forCheckout(docs));
        assertEquals(docs + " is not a vLLM checkout (no vllm/__init__.py or vllm/v1/)", e.getMessage());

        Path halfCheckout = Files.createDirectories(checkout.resolve("old/vllm"));
        Files.writeString(halfCheckout.resolve("__init__.py"), ""); // a pre-v1 vLLM
        DriftException old = assertThrows(DriftException.class, () -> DriftCheck.forCheckout(checkout.resolve("old")));
        assertEquals(checkout.resolve("old") + " is not a vLLM checkout (no vllm/__init__.py or vllm/v1/)",
                old.getMessage());
    }

    @Test
    void forCheckoutDiffsAgainstTheCommitInTheCheckoutsGitHistory() throws Exception {
        assumeTrue(git("--version").isPresent(), "git is not installed");
        write(PINNED);
        assertTrue(git("init", "-q").isPresent());
        assertTrue(git("add", ".").isPresent());
        assertTrue(git("commit", "-q", "-m", "pinned").isPresent());
        String head = git("rev-parse", "HEAD").orElseThrow().strip();
        write(PINNED.replace("defaultdict(list)", "defaultdict(dict)"));

        Pin pinned = new Pin(FILE, QUALNAME, head, PIN.fingerprint());
        Result r = DriftCheck.forCheckout(checkout).check(List.of(pinned)).get(0);
        assertEquals(Status.CHANGED, r.status());
        assertTrue(r.detail().contains("\n-        outputs: dict[int, list[EngineCoreOutput]] = defaultdict(list)\n"
                + "+        outputs: dict[int, list[EngineCoreOutput]] = defaultdict(dict)\n"), r.detail());
        assertTrue(r.detail().startsWith("--- " + FILE + "@" + head.substring(0, 8) + "\n"), r.detail());

        Pin absent = new Pin(FILE, QUALNAME, "1234567890123456789012345678901234567890", PIN.fingerprint());
        assertEquals("changed since 12345678 (no diff: that commit is not in this checkout)",
                DriftCheck.forCheckout(checkout).check(List.of(absent)).get(0).detail());
    }

    /** git in the checkout, isolated from the user's configuration; its output, or empty if it failed. */
    private Optional<String> git(String... args) throws InterruptedException {
        List<String> command = new ArrayList<>(List.of("git", "-C", checkout.toString(),
                "-c", "user.name=drift", "-c", "user.email=drift@example.invalid", "-c", "commit.gpgsign=false"));
        command.addAll(List.of(args));
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().put("GIT_CONFIG_GLOBAL", "/dev/null");
            builder.environment().put("GIT_CONFIG_NOSYSTEM", "1");
            Process process = builder.start();
            String out = new String(process.getInputStream().readAllBytes());
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0 ? Optional.of(out) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
