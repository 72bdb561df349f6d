package vllmrace.catalogue.drift;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A unified diff of two texts, line by line (Myers' shortest edit script), in the format {@code diff -u} and
 * {@code git diff} print: {@code ---}/{@code +++} headers and {@code @@ -a,b +c,d @@} hunks. Meant for function-sized
 * texts shown to a reader, hence the line cap.
 */
public final class UnifiedDiff {
    private UnifiedDiff() {}

    /** The diff, or "" when the texts are equal. */
    public static String of(String oldText, String newText, String oldLabel, String newLabel, int context) {
        return of(oldText, newText, oldLabel, newLabel, context, Integer.MAX_VALUE);
    }

    /**
     * The diff in at most {@code maxLines} lines: a longer one keeps its first {@code maxLines - 1} lines and ends
     * with {@code ... (N more lines)}.
     */
    public static String of(String oldText, String newText, String oldLabel, String newLabel, int context,
            int maxLines) {
        if (context < 0 || maxLines < 1) {
            throw new IllegalArgumentException("context must be >= 0 and maxLines >= 1, got " + context + ", " + maxLines);
        }
        List<String> a = lines(oldText);
        List<String> b = lines(newText);
        if (a.equals(b)) {
            return "";
        }
        List<String> out = new ArrayList<>();
        out.add("--- " + oldLabel);
        out.add("+++ " + newLabel);
        appendHunks(edits(a, b), context, out);
        if (out.size() > maxLines) {
            int kept = maxLines - 1;
            int more = out.size() - kept;
            out = new ArrayList<>(out.subList(0, kept));
            out.add("... (" + more + " more lines)");
        }
        return String.join("\n", out);
    }

    private static List<String> lines(String text) {
        return text.isEmpty() ? List.of() : List.of(text.split("\n", -1));
    }

    /** One line of the edit script: ' ' kept, '-' only in the old text, '+' only in the new one. */
    private record Edit(char op, String line) {}

    /** Groups changes closer than 2 * context kept lines into one hunk, as diff -u does. */
    private static void appendHunks(List<Edit> edits, int context, List<String> out) {
        int i = 0;
        int oldLine = 0; // old and new lines before edits[i]
        int newLine = 0;
        while (true) {
            int firstChange = nextChange(edits, i);
            if (firstChange < 0) {
                return;
            }
            int start = Math.max(i, firstChange - context);
            for (int k = i; k < start; k++) { // skipped kept lines
                oldLine++;
                newLine++;
            }
            int lastChange = firstChange;
            for (int next = nextChange(edits, lastChange + 1);
                    next >= 0 && next - lastChange - 1 <= 2 * context;
                    next = nextChange(edits, lastChange + 1)) {
                lastChange = next;
            }
            int end = Math.min(edits.size(), lastChange + 1 + context);
            List<String> body = new ArrayList<>();
            int oldCount = 0;
            int newCount = 0;
            for (Edit e : edits.subList(start, end)) {
                body.add(e.op() + e.line());
                oldCount += e.op() == '+' ? 0 : 1;
                newCount += e.op() == '-' ? 0 : 1;
            }
            // an empty side names the line before the hunk, as diff -u does
            out.add("@@ -" + (oldCount == 0 ? oldLine : oldLine + 1) + "," + oldCount
                    + " +" + (newCount == 0 ? newLine : newLine + 1) + "," + newCount + " @@");
            out.addAll(body);
            oldLine += oldCount;
            newLine += newCount;
            i = end;
        }
    }

    private static int nextChange(List<Edit> edits, int from) {
        for (int k = from; k < edits.size(); k++) {
            if (edits.get(k).op() != ' ') {
                return k;
            }
        }
        return -1;
    }

    /** The shortest edit script; the common head and tail are trimmed first, since most edits are local. */
    private static List<Edit> edits(List<String> a, List<String> b) {
        int head = 0;
        while (head < a.size() && head < b.size() && a.get(head).equals(b.get(head))) {
            head++;
        }
        int tail = 0;
        while (tail < a.size() - head && tail < b.size() - head
                && a.get(a.size() - 1 - tail).equals(b.get(b.size() - 1 - tail))) {
            tail++;
        }
        List<Edit> edits = new ArrayList<>();
        a.subList(0, head).forEach(line -> edits.add(new Edit(' ', line)));
        edits.addAll(myers(a.subList(head, a.size() - tail), b.subList(head, b.size() - tail)));
        a.subList(a.size() - tail, a.size()).forEach(line -> edits.add(new Edit(' ', line)));
        return edits;
    }

    /** Myers (1986): greedy furthest-reaching paths per diagonal, then a walk back through the saved frontiers. */
    private static List<Edit> myers(List<String> a, List<String> b) {
        int n = a.size();
        int m = b.size();
        int max = n + m;
        int offset = max + 1;
        int[] v = new int[2 * max + 3];
        List<int[]> trace = new ArrayList<>();
        search:
        for (int d = 0; d <= max; d++) {
            trace.add(v.clone());
            for (int k = -d; k <= d; k += 2) {
                int x = down(v, offset, k, d) ? v[offset + k + 1] : v[offset + k - 1] + 1;
                int y = x - k;
                while (x < n && y < m && a.get(x).equals(b.get(y))) {
                    x++;
                    y++;
                }
                v[offset + k] = x;
                if (x >= n && y >= m) {
                    break search;
                }
            }
        }
        List<Edit> reversed = new ArrayList<>();
        int x = n;
        int y = m;
        for (int d = trace.size() - 1; d >= 0; d--) {
            int[] frontier = trace.get(d);
            int k = x - y;
            int prevK = down(frontier, offset, k, d) ? k + 1 : k - 1;
            int prevX = frontier[offset + prevK];
            int prevY = prevX - prevK;
            while (x > prevX && y > prevY) {
                reversed.add(new Edit(' ', a.get(--x)));
                y--;
            }
            if (d > 0) {
                if (x == prevX) {
                    reversed.add(new Edit('+', b.get(--y)));
                } else {
                    reversed.add(new Edit('-', a.get(--x)));
                }
            }
        }
        Collections.reverse(reversed);
        return reversed;
    }

    /** Whether diagonal k is reached by an insertion (from k + 1) rather than a deletion (from k - 1). */
    private static boolean down(int[] v, int offset, int k, int d) {
        return k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]);
    }
}
