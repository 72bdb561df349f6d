package vllmrace.hunt;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import vllmrace.model.detect.Violation;
import vllmrace.model.fix.Fix;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Expectation;
import vllmrace.races.Params;
import vllmrace.races.Race;
import vllmrace.races.Shard;
import vllmrace.races.RaceScenario;
import vllmrace.races.Schedule;
import vllmrace.races.Variant;

/**
 * The race hunt: draws {@link HuntProgram}s from a seed, runs every step interleaving of each with the step enumerator,
 * shrinks each violation to a minimal program, and classifies it against the catalogue: a violation that a catalogued
 * race explains (an invariant in common, and that race's closers, switched on as well, remove it) is a rediscovery of
 * that race; anything else is a finding. Program {@code i} of seed {@code s} is drawn from {@code new Random(s * K + i)},
 * so a finding is reproduced from its seed and index whatever else the run did.
 */
public final class Hunt {
    private static final long SEED_STRIDE = 1_000_003L;
    private static final int MAX_SHRINK_ROUNDS = 64;

    /**
     * What to hunt: the seed, the fix set and the deployment's configuration (a profile's, or upstream's defaults), its
     * name for the report, and the bounds.
     */
    public record Options(long seed, FixSet fixes, Configuration configuration, String fixesName, int maxScenarios,
                          long maxMillis, int threads, Shard shard) {
        public Options {
            Objects.requireNonNull(shard, "shard");
            Objects.requireNonNull(fixes, "fixes");
            Objects.requireNonNull(configuration, "configuration");
            Objects.requireNonNull(fixesName, "fixesName");
            if (maxScenarios < 1 || maxMillis < 1 || threads < 1) {
                throw new IllegalArgumentException("bounds must be positive: scenarios " + maxScenarios + ", millis " + maxMillis
                        + ", threads " + threads);
            }
        }

        /** Every program of the seed below {@code maxScenarios} (shard 1/1). */
        public Options(long seed, FixSet fixes, Configuration configuration, String fixesName, int maxScenarios, long maxMillis,
                       int threads) {
            this(seed, fixes, configuration, fixesName, maxScenarios, maxMillis, threads, Shard.ALL);
        }

        /** Whether program {@code index} of the seed is this hunt's: below the bound and in its shard. */
        public boolean includes(int index) {
            return index >= 0 && index < maxScenarios && shard.includesIndex(index);
        }
    }

    /** Every interleaving of one program: how many, how many violate, the first violating run, the invariants broken. */
    public record Explored(int schedules, int violating, int modellingErrors, Schedule firstViolating, List<String> steps,
                           List<Violation> violations, Set<String> invariants) {
        public boolean violates() {
            return violating > 0;
        }
    }

    /** A catalogued race the hunt found again: how often, and the first time (ms from the start) and program index. */
    public record Rediscovery(Race race, int count, long firstAtMillis, int firstScenario) {
    }

    /** A violation no catalogued race explains, shrunk. */
    public record Finding(String id, int scenario, HuntProgram original, HuntProgram minimal, Explored explored) {
    }

    /**
     * The hunt's outcome and figures; {@code explored} holds the index of every program it ran (within its shard: the
     * indices {@code i < maxScenarios} with {@code i % N == I - 1}, from the lowest, until the time bound).
     */
    public record Report(Options options, int scenarios, long interleavings, long millis, int violatingScenarios,
                         int modellingErrors, Map<Race, Rediscovery> rediscoveries, List<Finding> findings,
                         List<Race> expressible, java.util.BitSet explored) {
        public double interleavingsPerSecond() {
            return millis == 0 ? 0 : interleavings * 1000.0 / millis;
        }
    }

    private final Options options;
    private final Map<Race, Set<String>> raceInvariants = new ConcurrentHashMap<>();

    public Hunt(Options options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /** Program {@code index} of {@code seed}. */
    public static HuntProgram program(long seed, int index) {
        if (index < 0) {
            throw new IllegalArgumentException("a scenario index is >= 0, got " + index);
        }
        return HuntProgram.generate(new Random(seed * SEED_STRIDE + index));
    }

    /** Runs every interleaving of {@code program} under {@code fixes}, upstream's default configuration. */
    public static Explored explore(HuntProgram program, FixSet fixes) {
        return explore(program, fixes, Configuration.DEFAULT);
    }

    /** Runs every interleaving of {@code program} under {@code fixes}, deployed with {@code configuration}. */
    public static Explored explore(HuntProgram program, FixSet fixes, Configuration configuration) {
        List<Schedule> schedules = Schedule.all(new HuntScenario(program, fixes, configuration));
        int violating = 0;
        int errors = 0;
        Schedule first = null;
        List<String> steps = List.of();
        List<Violation> violations = List.of();
        Set<String> invariants = new TreeSet<>();
        for (Schedule schedule : schedules) {
            HuntScenario scenario = new HuntScenario(program, fixes, configuration);
            Schedule.Result result = schedule.run(scenario, false);
            if (result.outcome().modellingError()) {
                errors++;
            } else if (result.outcome().violation()) {
                violating++;
                scenario.violations().forEach(v -> invariants.add(v.kind().invariant()));
                if (first == null || switches(schedule) < switches(first)) {
                    first = schedule;
                    steps = result.steps();
                    violations = scenario.violations();
                }
            }
        }
        return new Explored(schedules.size(), violating, errors, first, steps, violations, invariants);
    }

    private static int switches(Schedule schedule) {
        String a = schedule.actors();
        int n = 0;
        for (int i = 1; i < a.length(); i++) {
            n += a.charAt(i) != a.charAt(i - 1) ? 1 : 0;
        }
        return n;
    }

    /**
     * The catalogued races the hunt's operations can express: scheduler races whose scenario runs on one EngineCore
     * process (the frontend's and the MultiConnector's are outside its world), with a closer to classify by.
     */
    public static List<Race> expressible() {
        List<Race> out = new ArrayList<>();
        for (Race race : Race.values()) {
            if (race.component() == vllmrace.races.Component.SCHEDULER && race.expected(Variant.REPORTED) == Expectation.BUG_FOUND
                    && !race.closedBy().isEmpty()) {
                out.add(race);
            }
        }
        return out;
    }

    /** The invariants a catalogued race breaks in its reported variant (every schedule at its default point). */
    Set<String> invariantsOf(Race race) {
        return raceInvariants.computeIfAbsent(race, r -> {
            Set<String> out = new TreeSet<>();
            RaceScenario probe = r.scenario(r.fixes(Variant.REPORTED), Params.DEFAULT);
            for (Schedule schedule : Schedule.all(probe)) {
                RaceScenario scenario = r.scenario(r.fixes(Variant.REPORTED), Params.DEFAULT);
                schedule.run(scenario, false);
                scenario.violations().forEach(v -> out.add(v.kind().invariant()));
            }
            return out;
        });
    }

    /**
     * For a finding, what the catalogue's fixes do to it: each fix off in {@code fixes} that removes the violation when
     * switched on alone, with the catalogued races it closes (whose invariants are not the finding's, or it would be a
     * rediscovery). Empty when no single fix removes it. A program that does not violate under {@code fixes} is a
     * caller error.
     */
    public static Map<Fix, List<Race>> singleFixesRemoving(HuntProgram program, FixSet fixes, Configuration configuration) {
        if (!explore(program, fixes, configuration).violates()) {
            throw new IllegalArgumentException("no violation to remove: " + program + " is clean under " + fixes);
        }
        Map<Fix, List<Race>> out = new java.util.LinkedHashMap<>();
        for (Fix fix : Fix.values()) {
            if (!fixes.isOn(fix) && !explore(program, fixes.with(fix), configuration).violates()) {
                out.put(fix, java.util.Arrays.stream(Race.values()).filter(r -> r.closedBy().contains(fix)).toList());
            }
        }
        return out;
    }

    /**
     * The catalogued races that explain {@code explored}. With every fix on the violation must be gone (else no catalogued
     * fix closes it: a finding). Among the races that break one of its invariants and are not already closed by the hunt's
     * fixes: the first whose closers, added to the hunt's fixes, remove it; else those whose closers it needs (every fix
     * on but that race's closers brings it back); else, when their closers together remove it, those the others cannot do
     * without; else races that compose ({@link #composed}). Empty: a finding.
     */
    public List<Race> classify(HuntProgram program, Explored explored) {
        if (explore(program, FixSet.all(), options.configuration()).violates()) {
            return List.of();
        }
        List<Race> candidates = new ArrayList<>();
        for (Race race : Race.values()) {
            if (race.closedBy().isEmpty() || race.expected(Variant.REPORTED) != Expectation.BUG_FOUND
                    || race.closedBy().stream().allMatch(options.fixes()::isOn)) {
                continue; // no closer, or already closed by the hunt's fixes: it cannot be what the hunt sees
            }
            Set<String> common = new TreeSet<>(invariantsOf(race));
            common.retainAll(explored.invariants());
            if (!common.isEmpty()) {
                candidates.add(race);
            }
        }
        for (Race race : candidates) {
            if (!explore(program, withClosers(options.fixes(), List.of(race)), options.configuration()).violates()) {
                return List.of(race);
            }
        }
        List<Race> needed = new ArrayList<>();
        for (Race race : candidates) {
            if (explore(program, allBut(List.of(race)), options.configuration()).violates()) {
                needed.add(race);
            }
        }
        if (!needed.isEmpty()) {
            return needed;
        }
        if (!candidates.isEmpty() && !explore(program, withClosers(options.fixes(), candidates), options.configuration()).violates()) {
            // together they remove it: credit those whose closers the others cannot do without
            List<Race> together = new ArrayList<>();
            for (Race race : candidates) {
                List<Race> others = new ArrayList<>(candidates);
                others.remove(race);
                if (explore(program, withClosers(options.fixes(), others), options.configuration()).violates()) {
                    together.add(race);
                }
            }
            if (!together.isEmpty()) {
                return together;
            }
        }
        return composed(program, explored);
    }

    /**
     * Races that compose (a fix of one exposes the next, as a double free fixed leaves a leak): from the hunt's fixes, keep
     * adding the closers of a race that breaks an invariant still broken and whose closers change what breaks, until
     * nothing does. Empty if that gets stuck.
     */
    private List<Race> composed(HuntProgram program, Explored explored) {
        List<Race> used = new ArrayList<>();
        Explored current = explored;
        while (current.violates()) {
            Race step = null;
            Explored after = null;
            for (Race race : Race.values()) {
                if (used.contains(race) || race.closedBy().isEmpty() || race.expected(Variant.REPORTED) != Expectation.BUG_FOUND) {
                    continue;
                }
                Set<String> common = new TreeSet<>(invariantsOf(race));
                common.retainAll(current.invariants());
                if (common.isEmpty()) {
                    continue;
                }
                List<Race> trial = new ArrayList<>(used);
                trial.add(race);
                Explored e = explore(program, withClosers(options.fixes(), trial), options.configuration());
                if (e.violating() < current.violating() || !e.invariants().containsAll(current.invariants())) {
                    step = race;
                    after = e;
                    break;
                }
            }
            if (step == null) {
                return List.of();
            }
            used.add(step);
            current = after;
        }
        return used;
    }

    private static FixSet withClosers(FixSet fixes, List<Race> races) {
        FixSet out = fixes;
        for (Race race : races) {
            for (Fix fix : race.closers().full()) {
                out = out.with(fix);
            }
        }
        return out;
    }

    private static FixSet allBut(List<Race> races) {
        FixSet out = FixSet.all();
        for (Race race : races) {
            for (Fix fix : race.closedBy()) {
                out = out.without(fix);
            }
        }
        return out;
    }

    /** Shrinks a violating program that {@code label} classifies, keeping the classification. */
    HuntProgram shrink(HuntProgram program, List<Race> label) {
        HuntProgram current = program;
        for (int round = 0; round < MAX_SHRINK_ROUNDS; round++) {
            HuntProgram smaller = null;
            for (HuntProgram candidate : current.shrinkCandidates()) {
                Explored e = explore(candidate, options.fixes(), options.configuration());
                if (e.violates() && e.modellingErrors() == 0 && classify(candidate, e).equals(label)) {
                    smaller = candidate;
                    break;
                }
            }
            if (smaller == null) {
                return current;
            }
            current = smaller;
        }
        return current;
    }

    /** The hunt. */
    public Report run() {
        long start = System.nanoTime();
        long deadline = start + options.maxMillis() * 1_000_000L;
        AtomicInteger next = new AtomicInteger();
        AtomicInteger scenarios = new AtomicInteger();
        AtomicLong interleavings = new AtomicLong();
        AtomicInteger violatingScenarios = new AtomicInteger();
        AtomicInteger modellingErrors = new AtomicInteger();
        Map<Race, Rediscovery> rediscoveries = new ConcurrentHashMap<>();
        Map<String, Finding> findings = new ConcurrentHashMap<>();
        java.util.BitSet ran = new java.util.BitSet();
        Shard shard = options.shard();
        Runnable worker = () -> {
            while (System.nanoTime() < deadline) {
                long nth = next.getAndIncrement();
                long candidate = shard.index() - 1 + nth * shard.count(); // the shard's nth program of the seed
                if (candidate >= options.maxScenarios()) {
                    return;
                }
                int index = (int) candidate;
                synchronized (ran) {
                    ran.set(index);
                }
                HuntProgram program = program(options.seed(), index);
                Explored explored = explore(program, options.fixes(), options.configuration());
                scenarios.incrementAndGet();
                interleavings.addAndGet(explored.schedules());
                modellingErrors.addAndGet(explored.modellingErrors());
                if (!explored.violates()) {
                    continue;
                }
                violatingScenarios.incrementAndGet();
                List<Race> label = classify(program, explored);
                long at = (System.nanoTime() - start) / 1_000_000L;
                if (!label.isEmpty()) {
                    for (Race race : label) {
                        rediscoveries.merge(race, new Rediscovery(race, 1, at, index), (a, b) -> new Rediscovery(race, a.count() + 1,
                                Math.min(a.firstAtMillis(), b.firstAtMillis()), a.firstAtMillis() <= b.firstAtMillis() ? a.firstScenario() : b.firstScenario()));
                    }
                    continue;
                }
                HuntProgram minimal = shrink(program, label);
                Explored shrunk = explore(minimal, options.fixes(), options.configuration());
                String key = String.join("+", shrunk.invariants()) + " " + minimal;
                findings.putIfAbsent(key, new Finding(findingId(shrunk, minimal), index, program, minimal, shrunk));
            }
        };
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < options.threads(); t++) {
            Thread thread = new Thread(worker, "hunt-" + t);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("the hunt was interrupted", e);
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000L;
        Map<Race, Rediscovery> ordered = new LinkedHashMap<>();
        for (Race race : Race.values()) {
            if (rediscoveries.containsKey(race)) {
                ordered.put(race, rediscoveries.get(race));
            }
        }
        List<Finding> sorted = findings.values().stream()
                .sorted(java.util.Comparator.comparingInt((Finding f) -> f.minimal().size()).thenComparingInt(Finding::scenario)).toList();
        return new Report(options, scenarios.get(), interleavings.get(), millis, violatingScenarios.get(), modellingErrors.get(),
                ordered, sorted, expressible(), ran);
    }

    private static String findingId(Explored explored, HuntProgram minimal) {
        return "Hunt-" + String.join("-", explored.invariants()) + "-" + Integer.toHexString(minimal.toString().hashCode() & 0xfffff);
    }
}
