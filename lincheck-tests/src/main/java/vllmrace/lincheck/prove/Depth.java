package vllmrace.lincheck.prove;

import java.util.Locale;

/**
 * How far a bounded-exhaustive check goes past each race's Lincheck shape (its set-up and final part are kept as they
 * are; the two threads between them vary):
 * <ul>
 *   <li>{@link #SHAPE}: each thread any sequence of its own shape thread's calls, up to that thread's length (what
 *       {@code mvn verify} runs);</li>
 *   <li>{@code mixed:N}: either thread any sequence of the calls of both shape threads, up to the longer one's length
 *       plus N;</li>
 *   <li>{@code whole:N}: either thread any sequence of every call of the check's alphabet, up to N calls.</li>
 * </ul>
 */
public record Depth(Kind kind, int n) {
    public enum Kind { SHAPE, MIXED, WHOLE }

    public static final Depth SHAPE = new Depth(Kind.SHAPE, 0);

    public Depth {
        if (kind == null) {
            throw new IllegalArgumentException("a depth needs a kind");
        }
        if (kind == Kind.SHAPE && n != 0 || kind == Kind.MIXED && (n < 0 || n > 3) || kind == Kind.WHOLE && (n < 1 || n > 4)) {
            throw new IllegalArgumentException("bound " + kind.name().toLowerCase(Locale.ROOT) + ":" + n
                    + " is out of range: shape takes no number, mixed:0 to mixed:3 (calls past the shape), whole:1 to whole:4 (calls per thread)");
        }
    }

    public static Depth whole(int perThread) {
        return new Depth(Kind.WHOLE, perThread);
    }

    public static Depth mixed(int extra) {
        return new Depth(Kind.MIXED, extra);
    }

    /** {@code shape}, {@code mixed:N} or {@code whole:N}, as {@link #toString} writes it. */
    public static Depth parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.equals("shape")) {
            return SHAPE;
        }
        int colon = t.indexOf(':');
        if (colon > 0) {
            try {
                int n = Integer.parseInt(t.substring(colon + 1));
                switch (t.substring(0, colon)) {
                    case "mixed":
                        return mixed(n);
                    case "whole":
                        return whole(n);
                    default:
                        break;
                }
            } catch (NumberFormatException e) {
                // fall through to the message below
            }
        }
        throw new IllegalArgumentException("bound '" + text + "' is not one of: shape, mixed:N, whole:N");
    }

    @Override
    public String toString() {
        return kind == Kind.SHAPE ? "shape" : kind.name().toLowerCase(Locale.ROOT) + ":" + n;
    }
}
