package vllmrace.catalogue.drift;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * An upstream Python function a Java model mirrors, as it was at one vLLM commit.
 *
 * @param file        repo-relative path with '/' separators, e.g. {@code vllm/v1/core/sched/scheduler.py}
 * @param qualname    dotted name inside the file, e.g. {@code Scheduler.update_from_output}
 * @param commit      the full 40-hex commit the model was written against
 * @param fingerprint {@link Fingerprint} of the function at that commit (16 hex digits, stored lowercase)
 * @param plusPrs     merged PRs the model mirrors on top of that version, read from their diffs ({@code #N}); a checkout
 *                    that has them differs from the pin for their reasons
 */
public record Pin(String file, String qualname, String commit, String fingerprint, List<String> plusPrs) {
    private static final Pattern PR = Pattern.compile("#[1-9][0-9]*");
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
        require(plusPrs != null, "pin plus-PR list is null (" + qualname + ")");
        for (String pr : plusPrs) {
            require(pr != null && PR.matcher(pr).matches(), "a pin's plus PR must read #N: " + pr + " (" + qualname + ")");
        }
        require(new java.util.HashSet<>(plusPrs).size() == plusPrs.size(), "a pin names a plus PR twice: " + plusPrs + " (" + qualname + ")");
        plusPrs = List.copyOf(plusPrs);
    }

    /** A pin of the file version as it stands (no plus PRs). */
    public Pin(String file, String qualname, String commit, String fingerprint) {
        this(file, qualname, commit, fingerprint, List.of());
    }

    /** "file@abcdef12", plus " + #N, #M (from their diffs)" when the model adds PRs on top. */
    public String version() {
        return file + "@" + shortCommit() + (plusPrs.isEmpty() ? "" : " + " + String.join(", ", plusPrs) + " (from their diffs)");
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
