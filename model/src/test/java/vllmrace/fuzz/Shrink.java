package vllmrace.fuzz;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** The fuzzers' shrinking: greedy, one operation out at a time, while the shorter sequence still fails. */
final class Shrink {
    private Shrink() {
    }

    static <T> List<T> greedy(List<T> ops, Predicate<List<T>> fails) {
        List<T> shortest = new ArrayList<>(ops);
        boolean smaller = true;
        while (smaller) {
            smaller = false;
            for (int i = 0; i < shortest.size(); i++) {
                List<T> without = new ArrayList<>(shortest);
                without.remove(i);
                if (fails.test(without)) {
                    shortest = without;
                    smaller = true;
                    break;
                }
            }
        }
        return shortest;
    }
}
