package vllmrace.catalogue.drift;

import java.util.ArrayList;
import java.util.List;
import vllmrace.catalogue.drift.Result.Status;

/**
 * The drift check as terminal text: one aligned line per pin (status, file, qualname, detail), a CHANGED pin's diff
 * indented below its line, then a summary.
 */
public final class DriftReport {
    private static final String DIFF_INDENT = "    ";

    private DriftReport() {}

    /** The report, lines joined with "\n", no trailing newline. */
    public static String render(List<Result> results) {
        int statusWidth = 0;
        int fileWidth = 0;
        int nameWidth = 0;
        for (Result r : results) {
            statusWidth = Math.max(statusWidth, r.status().name().length());
            fileWidth = Math.max(fileWidth, r.pin().file().length());
            nameWidth = Math.max(nameWidth, r.pin().qualname().length());
        }
        List<String> out = new ArrayList<>();
        int[] counts = new int[Status.values().length];
        for (Result r : results) {
            counts[r.status().ordinal()]++;
            List<String> detail = List.of(r.detail().split("\n", -1));
            boolean diffOnly = detail.get(0).startsWith("--- ");
            String summary = diffOnly ? "changed since " + r.pin().shortCommit() : detail.get(0);
            out.add(pad(r.status().name(), statusWidth) + "  " + pad(r.pin().file(), fileWidth) + "  "
                    + pad(r.pin().qualname(), nameWidth) + "  " + summary);
            for (String line : detail.subList(diffOnly ? 0 : 1, detail.size())) {
                out.add(DIFF_INDENT + line);
            }
        }
        out.add(results.size() + (results.size() == 1 ? " pin: " : " pins: ")
                + counts[Status.UNCHANGED.ordinal()] + " unchanged, "
                + counts[Status.CHANGED.ordinal()] + " changed, "
                + counts[Status.GONE.ordinal()] + " gone"
                + (counts[Status.MISSING.ordinal()] == 0 ? "" : ", " + counts[Status.MISSING.ordinal()] + " not checked (file not in the checkout)"));
        return String.join("\n", out);
    }

    private static String pad(String s, int width) {
        return s + " ".repeat(width - s.length());
    }
}
