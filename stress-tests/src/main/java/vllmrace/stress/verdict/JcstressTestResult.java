package vllmrace.stress.verdict;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** One JCStress test's observed outcomes, summed over every configuration it ran in. */
public final class JcstressTestResult {
    private final String testName;
    private final Map<String, Long> counts = new TreeMap<>();
    private final Set<String> statuses = new TreeSet<>();
    private final List<String> messages = new ArrayList<>();
    private int launches = 1;

    JcstressTestResult(String testName) {
        this.testName = testName;
    }

    void add(String state, long count) {
        counts.merge(state, count, Long::sum);
    }

    void addStatus(String status) {
        statuses.add(status);
    }

    void addMessages(List<String> more) {
        messages.addAll(more);
    }

    /** Adds another launch's results of the same test. */
    void mergeFrom(JcstressTestResult other) {
        other.counts.forEach(this::add);
        statuses.addAll(other.statuses);
        messages.addAll(other.messages);
        launches += other.launches;
    }

    /** How many JCStress launches these results add up. */
    public int launches() {
        return launches;
    }

    public String testName() {
        return testName;
    }

    /** Outcome id → samples. */
    public Map<String, Long> counts() {
        return Collections.unmodifiableMap(counts);
    }

    public long totalSamples() {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }

    /** JCStress's run status per configuration: anything but NORMAL is a harness problem. */
    public Set<String> statuses() {
        return Collections.unmodifiableSet(statuses);
    }

    public boolean harnessError() {
        return statuses.stream().anyMatch(s -> !s.equals("NORMAL"));
    }

    public List<String> messages() {
        return Collections.unmodifiableList(messages);
    }
}
