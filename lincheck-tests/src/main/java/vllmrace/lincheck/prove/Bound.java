package vllmrace.lincheck.prove;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The programs a bounded-exhaustive check runs: after one of the set-ups, thread 1 runs any sequence of at most
 * {@code max1} calls from {@code alphabet1} and thread 2 any of at most {@code max2} from {@code alphabet2}, in parallel,
 * then one of the final parts. As Lincheck, the calls of one non-parallel group never run on both threads. When the two
 * threads have the same alphabet and maximum, a program and its mirror (threads swapped) have the same interleavings, so
 * only one of each pair is run.
 *
 * @param name      what the bound is for (a race's window, a set-up)
 * @param inits     the set-ups, each run sequentially first
 * @param posts     the final parts, each run sequentially after both threads ended
 * @param full      only programs whose threads have exactly their maximum of calls
 */
public record Bound(String name, List<List<Call>> inits, List<Call> alphabet1, int max1, List<Call> alphabet2, int max2,
                    List<List<Call>> posts, boolean full) {
    public Bound(String name, List<List<Call>> inits, List<Call> alphabet1, int max1, List<Call> alphabet2, int max2,
                 List<List<Call>> posts) {
        this(name, inits, alphabet1, max1, alphabet2, max2, posts, false);
    }

    /** One program and nothing else: each thread one call repeated, exactly (a race's two actions). */
    public static Bound exactly(String name, Program program) {
        if (Set.copyOf(program.thread1()).size() > 1 || Set.copyOf(program.thread2()).size() > 1) {
            throw new IllegalArgumentException(name + ": an exact bound takes threads of one call each (repeated), got " + program);
        }
        return new Bound(name, List.of(program.init()), program.thread1(), program.thread1().size(), program.thread2(),
                program.thread2().size(), List.of(program.post()), true);
    }

    public Bound {
        Objects.requireNonNull(name, "name");
        inits = inits.stream().map(List::copyOf).toList();
        posts = posts.stream().map(List::copyOf).toList();
        alphabet1 = List.copyOf(new java.util.LinkedHashSet<>(alphabet1));
        alphabet2 = List.copyOf(new java.util.LinkedHashSet<>(alphabet2));
        if (inits.isEmpty() || posts.isEmpty()) {
            throw new IllegalArgumentException(name + ": a bound needs at least one set-up and one final part (either may be empty)");
        }
        if (max1 < 0 || max2 < 0 || (max1 > 0 && alphabet1.isEmpty()) || (max2 > 0 && alphabet2.isEmpty())) {
            throw new IllegalArgumentException(name + ": a thread's maximum must be 0 or more, with calls to choose from");
        }
    }

    /** One set-up, both threads over one alphabet, one final part. */
    public static Bound of(String name, List<Call> init, List<Call> alphabet, int maxPerThread, List<Call> post) {
        return new Bound(name, List.of(init), alphabet, maxPerThread, alphabet, maxPerThread, List.of(post));
    }

    /** The same bound with each thread's maximum raised by {@code more}. */
    public Bound deeper(int more) {
        return new Bound(name, inits, alphabet1, max1 + more, alphabet2, max2 + more, posts, full);
    }

    boolean symmetric() {
        return alphabet1.equals(alphabet2) && max1 == max2 && !full;
    }

    /**
     * Visits every program, fewest parallel calls first (so the first failing program is a smallest one); stops when
     * {@code visitor} returns false. Returns how many programs it visited.
     */
    public long forEachProgram(Class<?> operations, Predicate<Program> visitor) {
        long visited = 0;
        for (int n = full ? max1 + max2 : 0; n <= max1 + max2; n++) {
            for (int a = full ? max1 : Math.max(0, n - max2); a <= Math.min(n, max1); a++) {
                int b = n - a;
                if (symmetric() && a > b) {
                    continue;
                }
                for (List<Call> t1 : sequences(alphabet1, a)) {
                    for (List<Call> t2 : sequences(alphabet2, b)) {
                        if (symmetric() && a == b && compare(t1, t2) > 0) {
                            continue;
                        }
                        if (sharesGroup(operations, t1, t2)) {
                            continue;
                        }
                        for (List<Call> init : inits) {
                            for (List<Call> post : posts) {
                                visited++;
                                if (!visitor.test(new Program(init, t1, t2, post))) {
                                    return visited;
                                }
                            }
                        }
                    }
                }
            }
        }
        return visited;
    }

    /** How many programs the bound holds. */
    public long programs(Class<?> operations) {
        return forEachProgram(operations, p -> true);
    }

    private int compare(List<Call> x, List<Call> y) {
        for (int i = 0; i < x.size(); i++) {
            int c = Integer.compare(alphabet1.indexOf(x.get(i)), alphabet1.indexOf(y.get(i)));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private static boolean sharesGroup(Class<?> operations, List<Call> t1, List<Call> t2) {
        Set<String> groups = new HashSet<>();
        for (Call c : t1) {
            String g = c.nonParallelGroup(operations);
            if (g != null) {
                groups.add(g);
            }
        }
        for (Call c : t2) {
            String g = c.nonParallelGroup(operations);
            if (g != null && groups.contains(g)) {
                return true;
            }
        }
        return false;
    }

    private static List<List<Call>> sequences(List<Call> alphabet, int length) {
        List<List<Call>> out = new ArrayList<>();
        out.add(Collections.emptyList());
        for (int i = 0; i < length; i++) {
            List<List<Call>> next = new ArrayList<>();
            for (List<Call> prefix : out) {
                for (Call c : alphabet) {
                    List<Call> longer = new ArrayList<>(prefix);
                    longer.add(c);
                    next.add(longer);
                }
            }
            out = next;
        }
        return out;
    }

    @Override
    public String toString() {
        if (full && alphabet1.size() <= 1 && alphabet2.size() <= 1) {
            return name + ": exactly " + inits.get(0) + ", then " + Collections.nCopies(max1, alphabet1.isEmpty() ? null : alphabet1.get(0))
                    + " || " + Collections.nCopies(max2, alphabet2.isEmpty() ? null : alphabet2.get(0)) + ", then " + posts.get(0);
        }
        String threads = symmetric() ? "each thread at most " + max1 + " of " + alphabet1
                : "thread 1 at most " + max1 + " of " + alphabet1 + ", thread 2 at most " + max2 + " of " + alphabet2;
        return name + ": set-up " + (inits.size() == 1 ? inits.get(0) : inits) + "; " + threads + "; then "
                + (posts.size() == 1 ? posts.get(0) : posts);
    }
}
