package vllmrace.catalogue.drift;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * An upstream Python function a Java model mirrors, as it was at one vLLM commit.
 *
 * @param file        repo-relative path with '/' separators, e.g. {@code vllm/v1/core/sched/scheduler.py}
 * @param qualname    dotted name inside the file, e.g. {@code Scheduler.update_from_output}
 * @param commit      the full 40-hex commit the model was written against
 * @param fingerprint {@link Fingerprint} of the function at that commit (16 hex digits, stored lowercase)
 */
public record Pin(String file, String qualname, String commit, String fingerprint) {
    private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");
    private static final Pattern FINGERPRINT = Pattern.compile("[0-9a-fA-F]{16}");
    private static final Pattern QUALNAME = Pattern.compile("[\\p{L}_][\\p{L}\\p{N}_]*(?:\\.[\\p{L}_][\\p{L}\\p{N}_]*)*");

    public Pin {
        require(file != null && !file.isBlank(), "pin file is empty");
        require(!file.startsWith("/") && !file.contains("\\") && !file.matches("^[A-Za-z]:.*"),
                "pin file must be repo-relative with '/' separators: " + file);
        for (String segment : file.split("/", -1)) {
            require(!segment.equals(".."), "pin file must stay inside the checkout (no '..'): " + file);
        }
        require(qualname != null && !qualname.isBlank(), "pin qualname is empty (" + file + ")");
        require(QUALNAME.matcher(qualname).matches(), "pin qualname is not a dotted Python name: " + qualname);
        require(commit != null && COMMIT.matcher(commit).matches(),
                "pin commit must be 40 lowercase hex digits: " + commit + " (" + qualname + ")");
        require(fingerprint != null && FINGERPRINT.matcher(fingerprint).matches(),
                "pin fingerprint must be 16 hex digits: " + fingerprint + " (" + qualname + ")");
        fingerprint = fingerprint.toLowerCase(Locale.ROOT); // Fingerprint.of prints lowercase
    }

    /** The commit as people quote it: its first 8 hex digits. */
    public String shortCommit() {
        return commit.substring(0, 8);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
