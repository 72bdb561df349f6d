package vllmrace.catalogue.drift;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Hunks as diff -u prints them (counts always written out), and a capped variant for terminal reports. */
class UnifiedDiffTest {
    private static final Pattern HUNK = Pattern.compile("@@ -(\\d+),(\\d+) \\+(\\d+),(\\d+) @@");

    /** Lines "l1".."ln". */
    private static List<String> numbered(int n) {
        return IntStream.rangeClosed(1, n).mapToObj(i -> "l" + i).collect(Collectors.toCollection(ArrayList::new));
    }

    private static String text(List<String> lines) {
        return String.join("\n", lines);
    }

    @Test
    void equalTextsHaveNoDiff() {
        assertEquals("", UnifiedDiff.of("a\nb", "a\nb", "old", "new", 3));
        assertEquals("", UnifiedDiff.of("", "", "old", "new", 3));
    }

    @Test
    void oneChangedLineWithThreeLinesOfContext() {
        List<String> changed = numbered(10);
        changed.set(4, "L5");
        assertEquals(String.join("\n",
                "--- a.py@00024d31",
                "+++ a.py (checkout)",
                "@@ -2,7 +2,7 @@",
                " l2", " l3", " l4", "-l5", "+L5", " l6", " l7", " l8"),
                UnifiedDiff.of(text(numbered(10)), text(changed), "a.py@00024d31", "a.py (checkout)", 3));
    }

    @Test
    void distantChangesMakeTwoHunksAndCloseOnesOne() {
        List<String> far = numbered(20);
        far.set(1, "L2");
        far.remove(17); // l18
        assertEquals(String.join("\n",
                "--- old", "+++ new",
                "@@ -1,5 +1,5 @@", " l1", "-l2", "+L2", " l3", " l4", " l5",
                "@@ -15,6 +15,5 @@", " l15", " l16", " l17", "-l18", " l19", " l20"),
                UnifiedDiff.of(text(numbered(20)), text(far), "old", "new", 3));

        List<String> close = numbered(20);
        close.set(4, "L5");
        close.add(11, "inserted"); // after l11: six kept lines between the changes, at most 2 * context
        String diff = UnifiedDiff.of(text(numbered(20)), text(close), "old", "new", 3);
        assertEquals(1, diff.lines().filter(l -> l.startsWith("@@")).count(), diff);
        assertTrue(diff.contains("@@ -2,13 +2,14 @@"), diff);
    }

    @Test
    void anEmptySideNamesTheLineBefore() {
        assertEquals("--- old\n+++ new\n@@ -0,0 +1,2 @@\n+a\n+b", UnifiedDiff.of("", "a\nb", "old", "new", 3));
        assertEquals("--- old\n+++ new\n@@ -1,2 +0,0 @@\n-a\n-b", UnifiedDiff.of("a\nb", "", "old", "new", 3));
    }

    @Test
    void longDiffsAreCappedWithACountOfTheRest() {
        List<String> all = numbered(30);
        String full = UnifiedDiff.of(text(all), "", "old", "new", 3);
        assertEquals(33, full.lines().count()); // 2 headers, 1 hunk header, 30 removals
        String capped = UnifiedDiff.of(text(all), "", "old", "new", 3, 10);
        List<String> lines = capped.lines().toList();
        assertEquals(10, lines.size());
        assertEquals(full.lines().limit(9).toList(), lines.subList(0, 9));
        assertEquals("... (24 more lines)", lines.get(9));
        assertEquals(full, UnifiedDiff.of(text(all), "", "old", "new", 3, 33), "a diff that fits is not cut");
        assertThrows(IllegalArgumentException.class, () -> UnifiedDiff.of("a", "b", "o", "n", 3, 0));
    }

    @Test
    void theDiffIsMinimalAndPatchesTheOldTextIntoTheNew() {
        Random random = new Random(20240601);
        for (int round = 0; round < 300; round++) {
            List<String> a = randomLines(random);
            List<String> b = randomLines(random);
            String diff = UnifiedDiff.of(text(a), text(b), "old", "new", random.nextInt(4));
            if (a.equals(b)) {
                assertEquals("", diff);
                continue;
            }
            assertEquals(b, apply(a, diff), "round " + round + ":\n" + diff);
            long changes = diff.lines().skip(2).filter(l -> l.startsWith("+") || l.startsWith("-")).count();
            assertEquals(a.size() + b.size() - 2L * lcs(a, b), changes, "not a shortest edit script:\n" + diff);
        }
    }

    private static List<String> randomLines(Random random) {
        List<String> lines = new ArrayList<>();
        int n = random.nextInt(12);
        for (int i = 0; i < n; i++) {
            lines.add(String.valueOf((char) ('a' + random.nextInt(4))));
        }
        return lines;
    }

    /** Applies the hunks, checking each context and removed line against the old text. */
    private static List<String> apply(List<String> old, String diff) {
        List<String> out = new ArrayList<>();
        int next = 0; // index in old of the first line not yet copied
        List<String> lines = diff.isEmpty() ? List.of() : List.of(diff.split("\n", -1));
        for (int i = 2; i < lines.size(); ) {
            Matcher m = HUNK.matcher(lines.get(i));
            assertTrue(m.matches(), lines.get(i));
            int oldStart = Integer.parseInt(m.group(2)) == 0 ? Integer.parseInt(m.group(1)) : Integer.parseInt(m.group(1)) - 1;
            out.addAll(old.subList(next, oldStart));
            next = oldStart;
            int oldCount = 0;
            int newCount = 0;
            for (i++; i < lines.size() && !lines.get(i).startsWith("@@"); i++) {
                String line = lines.get(i);
                String body = line.substring(1);
                switch (line.charAt(0)) {
                    case ' ' -> { assertEquals(old.get(next++), body); out.add(body); oldCount++; newCount++; }
                    case '-' -> { assertEquals(old.get(next++), body); oldCount++; }
                    case '+' -> { out.add(body); newCount++; }
                    default -> throw new AssertionError("not a diff line: " + line);
                }
            }
            assertEquals(Integer.parseInt(m.group(2)), oldCount, m.group());
            assertEquals(Integer.parseInt(m.group(4)), newCount, m.group());
        }
        out.addAll(old.subList(next, old.size()));
        return out;
    }

    private static int lcs(List<String> a, List<String> b) {
        int[][] t = new int[a.size() + 1][b.size() + 1];
        for (int i = a.size() - 1; i >= 0; i--) {
            for (int j = b.size() - 1; j >= 0; j--) {
                t[i][j] = a.get(i).equals(b.get(j)) ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
            }
        }
        return t[0][0];
    }
}
