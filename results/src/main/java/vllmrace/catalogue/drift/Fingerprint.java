package vllmrace.catalogue.drift;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.stream.Collectors;

/**
 * A short content hash of a function's text, the thing a pin records. Before hashing, trailing whitespace is
 * stripped and blank lines and comment-only lines are dropped, so edits to comments or blank lines alone are not
 * drift; any other edit is, decorators and docstrings included (a docstring line starting with '#' counts as a
 * comment). Indentation is kept: it is code in Python.
 */
public final class Fingerprint {
    private Fingerprint() {}

    /** The first 16 lowercase hex digits of the SHA-256 of the normalised text. */
    public static String of(String functionText) {
        String normalised = functionText.lines()
                .map(String::stripTrailing)
                .filter(line -> !line.isBlank() && !line.strip().startsWith("#"))
                .collect(Collectors.joining("\n"));
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(normalised.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
