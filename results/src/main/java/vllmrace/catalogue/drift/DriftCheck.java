package vllmrace.catalogue.drift;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import vllmrace.catalogue.drift.Result.Status;

/**
 * Checks pinned upstream functions against a local vLLM checkout: each pinned function is found by name in the
 * checkout's file and its {@link Fingerprint} compared with the pin's. The pinned version of the file (for the diff
 * of a changed function) comes from a provider: {@code git show <commit>:<file>} in the checkout
 * ({@link #forCheckout}), or a directory of pinned texts ({@link #withPinnedDirectory}). A pinned file the checkout does
 * not hold is MISSING (a partial tree), not GONE.
 */
public final class DriftCheck {
    private static final int DIFF_CONTEXT = 3;
    private static final int DIFF_MAX_LINES = 40;
    private static final long GIT_TIMEOUT_SECONDS = 10;

    private final Path checkout;
    private final Function<Pin, Optional<String>> pinnedSource;

    /**
     * @param checkout     the root of a vLLM checkout (holds {@code vllm/__init__.py} and {@code vllm/v1/})
     * @param pinnedSource the pinned file's text at the pin's commit, or empty when it is not available
     */
    public DriftCheck(Path checkout, Function<Pin, Optional<String>> pinnedSource) throws DriftException {
        Objects.requireNonNull(checkout, "checkout");
        this.pinnedSource = Objects.requireNonNull(pinnedSource, "pinnedSource");
        if (!Files.isDirectory(checkout)) {
            throw new DriftException("no such directory: " + checkout);
        }
        // a wrong path (vllm/vllm, a fork's docs) would otherwise report every pin GONE
        if (!Files.isRegularFile(checkout.resolve("vllm/__init__.py")) || !Files.isDirectory(checkout.resolve("vllm/v1"))) {
            throw new DriftException(checkout + " is not a vLLM checkout (no vllm/__init__.py or vllm/v1/)");
        }
        this.checkout = checkout;
    }

    /** A check whose pinned versions come from the checkout's own git history, offline. */
    public static DriftCheck forCheckout(Path checkout) throws DriftException {
        return new DriftCheck(checkout, pin -> gitShow(checkout, pin));
    }

    public List<Result> check(List<Pin> pins) throws DriftException {
        Map<String, Optional<String>> pinnedFiles = new HashMap<>(); // pins share files and commits
        List<Result> results = new ArrayList<>();
        for (Pin pin : pins) {
            results.add(check(pin, () -> pinnedFiles.computeIfAbsent(pin.commit() + ":" + pin.file(),
                    key -> Objects.requireNonNullElse(pinnedSource.apply(pin), Optional.empty()))));
        }
        return results;
    }

    /**
     * A check whose pinned versions are files under {@code pinnedDir}, laid out {@code <commit>/<file>} with the full or
     * the 8-digit commit (for a checkout without git history, e.g. a tarball or a sparse copy).
     *
     * @throws DriftException when {@code pinnedDir} is not a directory
     */
    public static DriftCheck withPinnedDirectory(Path checkout, Path pinnedDir) throws DriftException {
        Objects.requireNonNull(pinnedDir, "pinnedDir");
        if (!Files.isDirectory(pinnedDir)) {
            throw new DriftException("no such directory for the pinned texts: " + pinnedDir);
        }
        return new DriftCheck(checkout, pin -> pinnedFile(pinnedDir, pin));
    }

    static Optional<String> pinnedFile(Path pinnedDir, Pin pin) {
        for (String commit : List.of(pin.commit(), pin.shortCommit())) {
            Path path = pinnedDir.resolve(commit).resolve(pin.file());
            if (Files.isRegularFile(path)) {
                try {
                    return Optional.of(new String(Files.readAllBytes(path), StandardCharsets.UTF_8));
                } catch (IOException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** 1 when any pin changed or is gone (a CI step fails), else 0; a file missing from the checkout is not a change. */
    public static int exitCode(List<Result> results) {
        return results.stream().anyMatch(r -> r.status().moved()) ? 1 : 0;
    }

    private Result check(Pin pin, Supplier<Optional<String>> pinnedText) throws DriftException {
        Path path = checkout.resolve(pin.file());
        if (!Files.isRegularFile(path)) {
            return new Result(pin, Status.MISSING, "not checked: " + pin.file() + " is not in this checkout");
        }
        String source = read(path, pin.file());
        Optional<PyFunction> current = PythonSource.find(source, pin.qualname());
        if (current.isEmpty()) {
            return new Result(pin, Status.GONE, notFound(pin, source));
        }
        PyFunction now = current.get();
        Optional<PyFunction> pinned = pinnedText.get().flatMap(text -> PythonSource.find(text, pin.qualname()));
        if (Fingerprint.of(now.text()).equals(pin.fingerprint())) {
            boolean moved = pinned.isPresent()
                    && (pinned.get().startLine() != now.startLine() || pinned.get().endLine() != now.endLine());
            return new Result(pin, Status.UNCHANGED, "unchanged since " + pin.shortCommit()
                    + (moved ? " (now at lines " + now.startLine() + "-" + now.endLine() + ")" : "")
                    + (pin.plusPrs().isEmpty() ? "" : "; the model adds " + String.join(", ", pin.plusPrs())
                            + " from their diffs, which this function does not have here"));
        }
        String plus = pin.plusPrs().isEmpty() ? "" : "; the model already mirrors " + String.join(", ", pin.plusPrs())
                + " on top of it (from their diffs): a change of theirs is not drift";
        if (pinned.isEmpty()) {
            return new Result(pin, Status.CHANGED,
                    "changed since " + pin.shortCommit() + " (no diff: that commit is not in this checkout)" + plus);
        }
        String pinnedPrint = Fingerprint.of(pinned.get().text());
        boolean wrongPin = !pinnedPrint.equals(pin.fingerprint());
        String diff = UnifiedDiff.of(pinned.get().text(), now.text(), pin.file() + "@" + pin.shortCommit(),
                pin.file() + " (checkout)", DIFF_CONTEXT, wrongPin ? DIFF_MAX_LINES - 1 : DIFF_MAX_LINES);
        if (wrongPin) {
            // the pin itself is wrong: its commit's function has another fingerprint, so the diff may not be drift
            String note = "the pin's fingerprint " + pin.fingerprint() + " is not that of " + pin.qualname() + " at "
                    + pin.shortCommit() + " (" + pinnedPrint + ")";
            return new Result(pin, Status.CHANGED, diff.isEmpty() ? note : note + "\n" + diff);
        }
        return new Result(pin, Status.CHANGED, plus.isEmpty() ? diff : "changed since " + pin.shortCommit() + plus + "\n" + diff);
    }

    /** "X.f not found in file", naming where else a def f lives (a renamed class, a function moved out of one). */
    private static String notFound(Pin pin, String source) {
        String name = pin.qualname().substring(pin.qualname().lastIndexOf('.') + 1);
        Set<String> places = new LinkedHashSet<>();
        for (PyFunction f : PythonSource.functions(source)) {
            int dot = f.qualname().lastIndexOf('.');
            if (f.qualname().substring(dot + 1).equals(name)) {
                places.add(dot < 0 ? "at module level" : "under " + f.qualname().substring(0, dot));
            }
        }
        String detail = pin.qualname() + " not found in " + pin.file();
        return places.isEmpty() ? detail : detail + "; a def " + name + " exists " + String.join(", ", places);
    }

    private static String read(Path path, String file) throws DriftException {
        try {
            // lenient decoding: a stray byte must not hide every function in the file
            return new String(Files.readAllBytes(path), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new DriftException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * {@code git -C <checkout> show <commit>:<file>}, or empty when git is missing, the commit or file is not in the
     * checkout, or git does not answer within 10 s. Lazy fetching (partial clones) is off: the check stays offline.
     */
    static Optional<String> gitShow(Path checkout, Pin pin) {
        Path out = null;
        try {
            out = Files.createTempFile("vllm-drift-", ".py");
            ProcessBuilder git = new ProcessBuilder("git", "-C", checkout.toString(), "show",
                    pin.commit() + ":" + pin.file())
                    .redirectOutput(out.toFile()) // a file, not a pipe: a large blob cannot block git
                    .redirectError(ProcessBuilder.Redirect.DISCARD);
            git.environment().put("GIT_NO_LAZY_FETCH", "1");
            git.environment().put("GIT_TERMINAL_PROMPT", "0");
            Process process = git.start();
            process.getOutputStream().close();
            if (!process.waitFor(GIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return Optional.empty();
            }
            if (process.exitValue() != 0) {
                return Optional.empty();
            }
            return Optional.of(new String(Files.readAllBytes(out), StandardCharsets.UTF_8));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException ignored) {
                    // a temp file left behind is harmless
                }
            }
        }
    }
}
