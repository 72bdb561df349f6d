package vllmrace.catalogue;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import vllmrace.races.Race;

/** The races a catalogue argument names: the command line's lookup, kept where the command line is. */
final class RaceLookup {
    private RaceLookup() {
    }

    /**
     * Every race an argument names: its identifier, or an upstream reference ({@code #32255}, {@code seed 003}) which
     * may name several. Identifiers match exactly; references match by substring of {@link Race#upstream()}.
     *
     * @throws IllegalArgumentException naming the argument and the closest identifiers, when nothing matches
     */
    static List<Race> lookup(String idOrReference) {
        for (Race race : Race.values()) {
            if (race.name().equals(idOrReference)) {
                return List.of(race);
            }
        }
        List<Race> matches = Arrays.stream(Race.values())
                .filter(r -> !idOrReference.isBlank() && r.upstream().contains(idOrReference)).toList();
        if (matches.isEmpty()) {
            throw new IllegalArgumentException("no race '" + idOrReference + "'" + closest(idOrReference)
                    + " (./catalogue --list shows every race)");
        }
        return matches;
    }

    /** "; closest: A, B, C" for the identifiers nearest to {@code text} by edit distance (case-insensitive). */
    static String closest(String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        List<Race> sorted = Arrays.stream(Race.values())
                .sorted(Comparator.comparingInt((Race r) -> distance(lower, r.name().toLowerCase(Locale.ROOT))).thenComparing(Enum::ordinal))
                .limit(3).toList();
        return "; closest: " + sorted.stream().map(Enum::name).collect(Collectors.joining(", "));
    }

    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
