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
 * The race hunt: draws {@link Program}s from a seed (one in {@link #FRONTEND_ONE_IN} of the frontend, of the rest one in
 * {@link #CONNECTOR_ONE_IN_THE_REST} of the MultiConnector, the others of EngineCore),
 * runs every step interleaving of each with the step enumerator, shrinks each violation to a minimal program, and
 * classifies it against the catalogue: a violation that a catalogued
 * race explains (an invariant in common, and that race's closers, switched on as well, remove it) is a rediscovery of
 * that race; one that catalogued races explain in turn (the closers of one expose the next) is a composition of them, in
 * that order; anything else is a finding. Program {@code i} of seed {@code s} is drawn from {@code new Random(s * K + i)}
 * (its world from a SplittableRandom of the same seed), so a finding is reproduced from its seed and index whatever else
 * the run did.
 */
public final class Hunt {
    private static final long SEED_STRIDE = 1_000_003L;
    private static final int MAX_SHRINK_ROUNDS = 64;
    /** The longest chain of races a composition is searched for; a violation only a longer one explains is a finding. */
    public static final int MAX_COMPOSITION = 5;

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
                           List<Violation> violations, Set<String> invariants, int distinctEnds) {
        public boolean violates() {
            return violating > 0;
        }

        /**
         * No interleaving violates and none ends in a modelling error: only then has a fix set removed a violation (an
         * engine that never settles under some combination of fixes has not been shown clean).
         */
        public boolean clean() {
            return violating == 0 && modellingErrors == 0;
        }
    }

    /**
     * What explains a violation, as steps of races: a rediscovery is one step (one race, or races whose closers are needed
     * together); a composition is several, in order: the closers of each step's races change what breaks, which the next
     * step explains, until the last step's closers leave every interleaving clean; a finding has none.
     */
    public record Classification(Kind kind, List<List<Race>> steps, Fix proposal) {
        /**
         * How a violation is explained. A HAZARD is what a proposed (unmerged) fix's own code path does: with it off and
         * every other fix on, every interleaving is clean; vLLM main does not run it.
         */
        public enum Kind { REDISCOVERY, COMPOSITION, HAZARD, FINDING }

        public static final Classification FINDING = new Classification(Kind.FINDING, List.of());

        public Classification(Kind kind, List<List<Race>> steps) {
            this(kind, steps, null);
        }

        public Classification {
            Objects.requireNonNull(kind, "kind");
            steps = steps.stream().map(List::copyOf).toList();
            int expected = switch (kind) {
                case FINDING, HAZARD -> 0;
                case REDISCOVERY -> 1;
                case COMPOSITION -> Math.max(2, steps.size());
            };
            if (steps.size() != expected || steps.stream().anyMatch(List::isEmpty)) {
                throw new IllegalArgumentException(kind + " with steps " + steps + ": a finding or a hazard has none, a "
                        + "rediscovery one, a composition two or more, none empty");
            }
            if ((kind == Kind.HAZARD) != (proposal != null) || (proposal != null && proposal.provenance().merged())) {
                throw new IllegalArgumentException("a hazard, and only a hazard, names the unmerged proposal whose code path it "
                        + "is: " + kind + ", " + proposal);
            }
        }

        /** The hazard of {@code proposal}'s own code path. */
        public static Classification hazard(Fix proposal) {
            return new Classification(Kind.HAZARD, List.of(), Objects.requireNonNull(proposal, "proposal"));
        }

        public static Classification rediscovery(List<Race> races) {
            return new Classification(Kind.REDISCOVERY, List.of(races));
        }

        /** A chain of steps; a chain of one step is a rediscovery. */
        public static Classification composition(List<List<Race>> steps) {
            return new Classification(steps.size() == 1 ? Kind.REDISCOVERY : Kind.COMPOSITION, steps);
        }

        /** Every race of every step, in order. */
        public List<Race> races() {
            return steps.stream().flatMap(List::stream).toList();
        }

        /** Explained by catalogued races (a rediscovery or a composition); a hazard or a finding gets its own page. */
        public boolean explained() {
            return kind == Kind.REDISCOVERY || kind == Kind.COMPOSITION;
        }

        /** One line: "a rediscovery of A + B", "a composition of catalogued races: A, whose closers expose B, ...", or a finding. */
        public String describe() {
            return switch (kind) {
                case REDISCOVERY -> "a rediscovery of " + chain();
                case COMPOSITION -> "a composition of catalogued races: " + chain();
                case HAZARD -> "a hazard of the proposal " + proposal + " (" + proposal.upstream() + "): clean with it off";
                case FINDING -> "not explained by any catalogued race: a finding";
            };
        }

        /** The steps in order, each exposed by the closers of the one before: "A, whose closers expose B + C, ...". */
        public String chain() {
            return chain(steps);
        }

        static String chain(List<List<Race>> steps) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < steps.size(); i++) {
                b.append(i == 0 ? "" : i == 1 ? ", whose closers expose " : ", whose closers then expose ")
                        .append(steps.get(i).stream().map(Race::name).collect(java.util.stream.Collectors.joining(" + ")));
            }
            return b.toString();
        }
    }

    /** A catalogued race the hunt found again: how often, and the first time (ms from the start) and program index. */
    public record Rediscovery(Race race, int count, long firstAtMillis, int firstScenario) {
    }

    /** A chain of catalogued races the hunt found composed: how often, and the first time and program index. */
    public record Composition(List<List<Race>> steps, int count, long firstAtMillis, int firstScenario) {
        public Composition {
            steps = steps.stream().map(List::copyOf).toList();
        }

        Composition plus(Composition other) {
            boolean earlier = firstAtMillis <= other.firstAtMillis;
            return new Composition(steps, count + other.count, earlier ? firstAtMillis : other.firstAtMillis,
                    earlier ? firstScenario : other.firstScenario);
        }

        /** The chain, as {@link Classification#chain()} words it. */
        public String chain() {
            return Classification.chain(steps);
        }
    }

    /**
     * Exploration throughput of the programs of one size ({@link Program#size()}): how many, their interleavings, and
     * the thread time their exploration took (classification and shrinking left out).
     */
    public record Throughput(int programs, long interleavings, long nanos, long distinctEnds) {
        public Throughput plus(Throughput other) {
            return new Throughput(programs + other.programs, interleavings + other.interleavings, nanos + other.nanos,
                    distinctEnds + other.distinctEnds);
        }

        /**
         * Interleavings per distinct end state: the most an outcome-preserving partial-order reduction could divide the
         * interleavings by (it explores at least one per end state); 0 with none counted.
         */
        public double interleavingsPerEndState() {
            return distinctEnds == 0 ? 0 : (double) interleavings / distinctEnds;
        }

        /** Interleavings per second of one thread's exploring. */
        public double interleavingsPerThreadSecond() {
            return nanos == 0 ? 0 : interleavings * 1e9 / nanos;
        }
    }

    /**
     * A violation no catalogued race explains, shrunk; {@code hazardOf} names the unmerged proposal whose own code path it
     * is (clean with that proposal off), null for a finding outside the catalogue.
     */
    public record Finding(String id, int scenario, Program original, Program minimal, Explored explored, Fix hazardOf) {
        public Finding(String id, int scenario, Program original, Program minimal, Explored explored) {
            this(id, scenario, original, minimal, explored, null);
        }

        /** Outside the catalogue and its proposals: not a proposal's hazard. */
        public boolean outsideCatalogue() {
            return hazardOf == null;
        }
    }

    /**
     * The hunt's outcome and figures; {@code explored} holds the index of every program it ran (within its shard: the
     * indices {@code i < maxScenarios} with {@code i % N == I - 1}, from the lowest, until the time bound).
     */
    public record Report(Options options, int scenarios, long interleavings, long millis, int violatingScenarios,
                         int modellingErrors, Map<Race, Rediscovery> rediscoveries, List<Composition> compositions,
                         List<Finding> findings, List<Race> expressible, java.util.BitSet explored,
                         java.util.SortedMap<Integer, Throughput> bySize) {
        public double interleavingsPerSecond() {
            return millis == 0 ? 0 : interleavings * 1000.0 / millis;
        }
    }

    private final Options options;
    private final Map<Race, Set<String>> raceInvariants = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicReference<List<Race>> expressible = new java.util.concurrent.atomic.AtomicReference<>();

    public Hunt(Options options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /** Program {@code index} of {@code seed}. */
    public static Program program(long seed, int index) {
        if (index < 0) {
            throw new IllegalArgumentException("a scenario index is >= 0, got " + index);
        }
        long stream = seed * SEED_STRIDE + index;
        // the world is drawn apart (SplittableRandom mixes its seed: neighbouring indices draw independently), so an engine
        // program is the same whether or not the frontend world is in the hunt
        java.util.SplittableRandom world = new java.util.SplittableRandom(stream);
        if (world.nextInt(FRONTEND_ONE_IN) == 0) {
            return FrontendProgram.generate(new Random(stream));
        }
        return world.nextInt(CONNECTOR_ONE_IN_THE_REST) == 0 ? ConnectorProgram.generate(new Random(stream))
                : HuntProgram.generate(new Random(stream));
    }

    /** One program in this many is of the frontend world ({@link FrontendProgram}); the rest are EngineCore programs. */
    public static final int FRONTEND_ONE_IN = 4;

    /** Of the other programs, one in this many is of the connector world ({@link ConnectorProgram}). */
    public static final int CONNECTOR_ONE_IN_THE_REST = 3;

    /** Runs every interleaving of {@code program} under {@code fixes}, upstream's default configuration. */
    public static Explored explore(Program program, FixSet fixes) {
        return explore(program, fixes, Configuration.DEFAULT);
    }

    /** Runs every interleaving of {@code program} under {@code fixes}, deployed with {@code configuration}. */
    public static Explored explore(Program program, FixSet fixes, Configuration configuration) {
        List<Schedule> schedules = Schedule.all(program.scenario(fixes, configuration));
        int violating = 0;
        int errors = 0;
        Schedule first = null;
        List<String> steps = List.of();
        List<Violation> violations = List.of();
        Set<String> invariants = new TreeSet<>();
        Set<String> ends = new java.util.HashSet<>();
        for (Schedule schedule : schedules) {
            RaceScenario scenario = program.scenario(fixes, configuration);
            Schedule.Result result = schedule.run(scenario, false);
            ends.add(endState(scenario, result));
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
        return new Explored(schedules.size(), violating, errors, first, steps, violations, invariants, ends.size());
    }

    /**
     * Where a run ended, as the judge and the scheduler see it: the outcome, every detector finding in words (ids, blocks
     * and generations), and the scheduler's progress signature (requests, statuses, queues, transfers awaited). Two
     * interleavings with the same end state are interchangeable for every verdict the hunt draws, so an outcome-preserving
     * reduction needs at least one interleaving per end state: interleavings over end states bounds what partial-order
     * reduction could save.
     */
    private static String endState(RaceScenario scenario, Schedule.Result result) {
        String scheduler = scenario instanceof vllmrace.races.TwoActorScenario t
                ? t.system().scheduler().progressSignature() : "";
        return result.outcome() + " " + scenario.violations() + " " + scheduler;
    }

    private static int switches(Schedule schedule) {
        String a = schedule.actors();
        int n = 0;
        for (int i = 1; i < a.length(); i++) {
            n += a.charAt(i) != a.charAt(i - 1) ? 1 : 0;
        }
        return n;
    }

    /** The catalogued races the hunt's worlds do not hold, and why. */
    public static final Map<Race, String> OUTSIDE_WORLD = Map.ofEntries(
            Map.entry(Race.CollectorMergesChunkBoundary, "streaming input sessions are not in the frontend programs"),
            Map.entry(Race.DpPauseLatchStuck, "data parallelism, the DP coordinator and its ranks, is in no world"),
            Map.entry(Race.StaleWaveWakesPausedRank, "data parallelism, the DP coordinator and its ranks, is in no world"),
            Map.entry(Race.FailedRecvReportedTwice, "the connector programs pull from one remote rank, whole pulls at a time: "
                    + "no NIXL handle fails on its own"),
            Map.entry(Race.SiblingHandleWritesAfterFailure, "the connector programs pull from one remote rank, whole pulls at a "
                    + "time: no NIXL handle fails on its own"),
            Map.entry(Race.ExtraSaveCountNeverDrained, "the connector programs run one worker: no prefill context parallelism"),
            Map.entry(Race.NonChosenChildBlindToLoad, "the job-based offloader and its reuse fence are not a child kind of the "
                    + "connector programs"),
            Map.entry(Race.CancelBeforeSubmitStrandsPrefill, "it spans two engines: the decode side's frontend (generate() "
                    + "cancelled inside add_request) and the prefill side's lease; each world holds one engine"));

    /**
     * The catalogued races the hunt's worlds hold (races with a closer, found in their reported variant, not in
     * {@link #OUTSIDE_WORLD}), whatever the fixes.
     */
    public static List<Race> inWorld() {
        return IN_WORLD;
    }

    private static final List<Race> IN_WORLD = computeInWorld();

    private static List<Race> computeInWorld() {
        List<Race> out = new ArrayList<>();
        for (Race race : Race.values()) {
            if (race.expected(Variant.REPORTED) == Expectation.BUG_FOUND && !race.closedBy().isEmpty()
                    && !OUTSIDE_WORLD.containsKey(race)) {
                out.add(race);
            }
        }
        return List.copyOf(out);
    }

    /**
     * The races of {@link #inWorld()} the hunt can find under its fixes on its deployment: not closed by them, and their
     * own scenario breaks one of their invariants in some interleaving, either run under the hunt's fixes (the race can
     * show alone) or under the fixes a composition can reach ({@link #reachable}: once the closers of the races before it
     * in the chain are on, as DoubleAbortApplication's window needs #29987's aborts queue, the closer of
     * AbortLosesToFinalStep). An AsyncScheduler race under the sync scheduler shows in neither.
     */
    public List<Race> expressible() {
        return expressible.updateAndGet(known -> known != null ? known : inWorld().stream()
                .filter(race -> closable(race, hunted()) && (shows(race, options.fixes()) || shows(race, reachable(race))))
                .toList());
    }

    /**
     * The fixes a composition can switch on before reaching {@code race}: the hunt's, plus the closers (with the fixes
     * they are built on) of every other race of the worlds, less {@code race}'s own. A race whose window needs a fix that
     * is no race's closer (seed 003's loads need #46865's real blocks for the non-chosen child) cannot show under fixes
     * that lack it, alone or in a composition.
     */
    private FixSet reachable(Race race) {
        FixSet out = options.fixes();
        for (Race other : IN_WORLD) {
            if (other != race) {
                for (Fix fix : other.closers().full()) {
                    if (!race.closedBy().contains(fix)) {
                        out = out.with(fix);
                        for (Fix base : fix.builtOn()) {
                            out = race.closedBy().contains(base) ? out : out.with(base);
                        }
                    }
                }
            }
        }
        return out;
    }

    /** Of {@link #expressible()}, the races that can show only in a composition: under the hunt's fixes their window is shut. */
    public List<Race> expressibleOnlyInAComposition() {
        return expressible().stream().filter(race -> !shows(race, options.fixes())).toList();
    }

    private boolean shows(Race race, FixSet fixes) {
        try {
            RaceScenario probe = race.scenario(fixes, options.configuration(), Params.DEFAULT);
            for (Schedule schedule : Schedule.all(probe)) {
                RaceScenario scenario = race.scenario(fixes, options.configuration(), Params.DEFAULT);
                schedule.run(scenario, false);
                if (scenario.violations().stream().anyMatch(v -> invariantsOf(race).contains(v.kind().invariant()))) {
                    return true;
                }
            }
            return false;
        } catch (IllegalStateException e) {
            return false; // its set-up cannot be built under these fixes: it needs one they have off
        }
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
    public static Map<Fix, List<Race>> singleFixesRemoving(Program program, FixSet fixes, Configuration configuration) {
        if (!explore(program, fixes, configuration).violates()) {
            throw new IllegalArgumentException("no violation to remove: " + program + " is clean under " + fixes);
        }
        Map<Fix, List<Race>> out = new java.util.LinkedHashMap<>();
        for (Fix fix : Fix.values()) {
            if (!fixes.isOn(fix) && explore(program, fixes.with(fix), configuration).clean()) {
                out.put(fix, java.util.Arrays.stream(Race.values()).filter(r -> r.closedBy().contains(fix)).toList());
            }
        }
        return out;
    }

    /**
     * What explains {@code explored}. With every fix on, and no configuration switch taking a fix's code path away, the
     * violation must be gone (else no catalogued fix closes it: a finding). Closing a race below switches its closers on
     * and drops the switches that take them away ({@link Deployed#withClosers}), so a race the deployment's configuration
     * reopens is explained like one whose fix is off. Among the races that break one of its invariants and are not
     * already closed by the hunt's deployment: the first that behaves as that race does (each of its full closers alone
     * removes it: a stop string's late ABORT is StopStringLateAbort, not DuplicateIdAbortWindow, which shares #27987 but
     * whose other closer, AsyncLLM.abort sending before it drops state, does not remove it); else the
     * first whose closers, added to the hunt's fixes, remove it; else those whose closers it needs (every fix on but that
     * race's closers brings it back), less any whose closers include another needed race's; else the shortest composition
     * ({@link #composed}); else, when their closers together remove it, those the others cannot do without (each a
     * rediscovery); else a finding. Candidates are the races of the hunt's worlds ({@link #inWorld()}).
     */
    public Classification classify(Program program, Explored explored) {
        Deployed remedied = Deployed.remedied(options.configuration());
        Fix aside = null; // a proposal whose own hazard this program shows with it on: kept off in "every fix on but X"
        if (!explore(program, remedied).clean()) {
            aside = proposalAside(program, remedied);
            if (aside == null) {
                return Classification.FINDING;
            }
            if (hunted().runs(aside) && explore(program, hunted().without(aside)).clean()) {
                return Classification.hazard(aside);
            }
            // the proposal's hazard shows only with it on; what the hunt's fixes show is classified as usual
        }
        // that proposal's hazard is not what the program shows: classifying, it is never switched on as a closer (a full
        // closer that alone frees a leaked block while a WRITE still lands would otherwise hide the leak's own cause)
        Fix hazardous = aside != null && !hunted().runs(aside) ? aside : null;
        List<Race> candidates = new ArrayList<>();
        for (Race race : IN_WORLD) { // a race outside every world cannot be what a program shows
            if (closable(race, hunted()) && sharesAnInvariant(race, explored)) {
                candidates.add(race);
            }
        }
        Map<Deployed, Explored> seen = new java.util.HashMap<>();
        for (Race race : candidates) { // behaves as the race does: each of its closers alone removes it
            List<Fix> closers = race.closers().full().stream().filter(fix -> fix != hazardous).toList();
            if (!closers.isEmpty() && closers.stream().allMatch(fix -> seen.computeIfAbsent(hunted().withFixes(java.util.Set.of(fix)),
                    d -> explore(program, d)).clean())) {
                return Classification.rediscovery(List.of(race));
            }
        }
        for (Race race : candidates) { // else its closers together do
            if (seen.computeIfAbsent(closing(List.of(race), hazardous), d -> explore(program, d)).clean()) {
                return Classification.rediscovery(List.of(race));
            }
        }
        List<Race> needed = new ArrayList<>();
        for (Race race : candidates) {
            if (seen.computeIfAbsent(allBut(race, aside), d -> explore(program, d)).violates()) {
                needed.add(race);
            }
        }
        // a race needed only through closers it shares with another needed race (#27987 closes five) is not credited: keep
        // those whose closer set holds no other needed race's; races with the same closers cannot be told apart by fixes
        List<Race> minimal = narrowest(needed);
        if (!minimal.isEmpty()) {
            return Classification.rediscovery(minimal);
        }
        List<List<Race>> chain = composed(program, explored, seen);
        if (!chain.isEmpty()) {
            return Classification.composition(chain);
        }
        if (!candidates.isEmpty() && seen.computeIfAbsent(closing(candidates, hazardous), d -> explore(program, d)).clean()) {
            // together they remove it: credit those whose closers the others cannot do without
            List<Race> together = new ArrayList<>();
            for (Race race : candidates) {
                List<Race> others = new ArrayList<>(candidates);
                others.remove(race);
                if (!seen.computeIfAbsent(closing(others, hazardous), d -> explore(program, d)).clean()) {
                    together.add(race);
                }
            }
            if (!together.isEmpty()) {
                return Classification.rediscovery(together);
            }
        }
        return Classification.FINDING;
    }

    /** The hunt's deployment with {@code races}' closers on, less {@code hazardous} (null: none) whose hazard the program shows. */
    private Deployed closing(List<Race> races, Fix hazardous) {
        Deployed closed = hunted().withClosers(races);
        return hazardous == null ? closed : closed.without(hazardous);
    }

    /**
     * The unmerged proposal whose code path is what remains with every fix on: switched off alone (every other fix on), the
     * program is clean. Null if none is (a finding).
     */
    private static Fix proposalAside(Program program, Deployed remedied) {
        for (Fix fix : Fix.values()) {
            if (!fix.provenance().merged() && remedied.runs(fix) && explore(program, remedied.without(fix)).clean()) {
                return fix;
            }
        }
        return null;
    }

    /**
     * A race with closers, found in its reported variant, that {@code deployed} does not already close: none of its full
     * closers (each closes it alone) runs, being off or on with its code path taken away by the configuration (as
     * request-id randomization disabled takes #27987's). The registry's vLLM-main verdict reads the same way.
     */
    private static boolean closable(Race race, Deployed deployed) {
        return !race.closedBy().isEmpty() && race.expected(Variant.REPORTED) == Expectation.BUG_FOUND
                && race.closers().full().stream().noneMatch(deployed::runs);
    }

    private boolean sharesAnInvariant(Race race, Explored explored) {
        Set<String> common = new TreeSet<>(invariantsOf(race));
        common.retainAll(explored.invariants());
        return !common.isEmpty();
    }

    /**
     * The shortest composition (a fix of one race exposes the next, as a double free fixed leaves a leak): a chain of
     * steps from the hunt's fixes. A step is a race breaking an invariant the violation still breaks and not closed yet,
     * whose closers change what breaks (another set of invariants, or fewer violating interleavings); or, last, races
     * whose closers together leave every interleaving clean and each of which the others cannot do without. Searched by
     * increasing length up to {@link #MAX_COMPOSITION} steps; each fix set is explored once per classification
     * ({@code seen}, shared with {@link #classify}). Empty if no chain does it.
     */
    private List<List<Race>> composed(Program program, Explored explored, Map<Deployed, Explored> seen) {
        for (int length = 2; length <= MAX_COMPOSITION; length++) {
            List<List<Race>> chain = chain(program, hunted(), explored, new ArrayList<>(), length, seen);
            if (chain != null) {
                return chain;
            }
        }
        return List.of();
    }

    private List<List<Race>> chain(Program program, Deployed fixes, Explored current, List<List<Race>> used, int length,
                                   Map<Deployed, Explored> seen) {
        if (current.clean()) {
            return List.copyOf(used);
        }
        if (used.size() == length) {
            return null;
        }
        List<Race> candidates = new ArrayList<>();
        for (Race race : IN_WORLD) {
            if (used.stream().noneMatch(step -> step.contains(race)) && closable(race, fixes) && sharesAnInvariant(race, current)) {
                candidates.add(race);
            }
        }
        for (Race race : candidates) {
            Deployed next = fixes.withClosers(List.of(race));
            Explored after = seen.computeIfAbsent(next, d -> explore(program, d));
            if (!after.violates() && !after.clean()) {
                continue; // an engine that never settles under these fixes shows nothing either way
            }
            if (after.violates() && after.violating() >= current.violating() && after.invariants().equals(current.invariants())) {
                continue; // its closers change nothing this program shows
            }
            used.add(List.of(race));
            List<List<Race>> found = chain(program, next, after, used, length, seen);
            if (found != null) {
                return found;
            }
            used.remove(used.size() - 1);
        }
        List<Race> together = together(program, fixes, candidates, seen);
        if (together.isEmpty()) {
            // a race whose closers hold another candidate's (PushPostFailureAbortedLeaks' #46289 is DelayFreedNeverReleased's
            // only closer) makes each of the two one the other can do without: try again without the wider one
            together = together(program, fixes, narrowest(candidates), seen);
        }
        if (!together.isEmpty()) {
            List<List<Race>> out = new ArrayList<>(used);
            out.add(together);
            return out;
        }
        return null;
    }

    /** {@code races} less any whose closer set strictly holds another's: fixes cannot credit it apart from that one. */
    private static List<Race> narrowest(List<Race> races) {
        return races.stream().filter(race -> races.stream().noneMatch(other -> other != race
                && race.closedBy().containsAll(other.closedBy()) && !other.closedBy().containsAll(race.closedBy()))).toList();
    }

    /**
     * Of {@code candidates}, whose closers added to {@code fixes} together leave {@code program} clean, those the others
     * cannot do without, if their closers alone still do; else empty.
     */
    private List<Race> together(Program program, Deployed fixes, List<Race> candidates, Map<Deployed, Explored> seen) {
        if (candidates.size() < 2 || !seen.computeIfAbsent(fixes.withClosers(candidates), d -> explore(program, d)).clean()) {
            return List.of();
        }
        List<Race> needed = new ArrayList<>();
        for (Race race : candidates) {
            List<Race> others = new ArrayList<>(candidates);
            others.remove(race);
            if (!seen.computeIfAbsent(fixes.withClosers(others), d -> explore(program, d)).clean()) {
                needed.add(race);
            }
        }
        boolean enough = !needed.isEmpty()
                && seen.computeIfAbsent(fixes.withClosers(needed), d -> explore(program, d)).clean();
        return enough ? needed : List.of();
    }

    /**
     * A fix set run under a configuration: what classification explores. Closing a race switches its closers on (with the
     * fixes they are built on) and drops the configuration switches that take a closer's code path away: a race the
     * deployment's configuration reopens is closed by deploying it without that switch.
     */
    record Deployed(FixSet fixes, Configuration configuration) {
        /** Every fix on, and no switch of {@code configuration} taking a fix's code path away: no catalogued race left open. */
        static Deployed remedied(Configuration configuration) {
            return new Deployed(FixSet.all(), configuration.restoring(java.util.EnumSet.allOf(Fix.class)));
        }

        /** Whether {@code fix}'s code path runs: it is on and the configuration does not take it away. */
        boolean runs(Fix fix) {
            return fixes.isOn(fix) && !configuration.takesAway(fix);
        }

        /** {@code fix} switched off. */
        Deployed without(Fix fix) {
            return new Deployed(fixes.without(fix), configuration);
        }

        Deployed withClosers(List<Race> races) {
            java.util.EnumSet<Fix> closers = java.util.EnumSet.noneOf(Fix.class);
            races.forEach(race -> closers.addAll(race.closers().full()));
            return withFixes(closers);
        }

        /** {@code added} switched on, with the fixes each is built on, and the switches taking any of them away dropped. */
        Deployed withFixes(java.util.Set<Fix> added) {
            FixSet out = fixes;
            java.util.EnumSet<Fix> restored = java.util.EnumSet.noneOf(Fix.class);
            for (Fix fix : added) {
                out = out.with(fix);
                restored.add(fix);
                for (Fix base : fix.builtOn()) {
                    out = out.with(base);
                    restored.add(base);
                }
            }
            return new Deployed(out, configuration.restoring(restored));
        }
    }

    private Deployed hunted() {
        return new Deployed(options.fixes(), options.configuration());
    }

    private static Explored explore(Program program, Deployed deployed) {
        return explore(program, deployed.fixes(), deployed.configuration());
    }

    /** Every fix on but {@code race}'s closers, with their code paths run but for those closers (the configuration's switches for them kept). */
    private Deployed allBut(Race race, Fix aside) {
        FixSet out = aside == null ? FixSet.all() : FixSet.all().without(aside);
        for (Fix fix : race.closedBy()) {
            out = out.without(fix);
        }
        java.util.EnumSet<Fix> restored = java.util.EnumSet.allOf(Fix.class);
        restored.removeAll(race.closedBy());
        return new Deployed(out, options.configuration().restoring(restored));
    }

    /** Shrinks a violating program that {@code label} classifies, keeping the classification. */
    Program shrink(Program program, Classification label) {
        Program current = program;
        for (int round = 0; round < MAX_SHRINK_ROUNDS; round++) {
            Program smaller = null;
            for (Program candidate : current.shrinkCandidates()) {
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
        Map<List<List<Race>>, Composition> compositions = new ConcurrentHashMap<>();
        Map<Integer, Throughput> bySize = new ConcurrentHashMap<>();
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
                Program program = program(options.seed(), index);
                long began = System.nanoTime();
                Explored explored = explore(program, options.fixes(), options.configuration());
                bySize.merge(program.size(), new Throughput(1, explored.schedules(), System.nanoTime() - began, explored.distinctEnds()),
                        Throughput::plus);
                scenarios.incrementAndGet();
                interleavings.addAndGet(explored.schedules());
                modellingErrors.addAndGet(explored.modellingErrors());
                if (!explored.violates()) {
                    continue;
                }
                violatingScenarios.incrementAndGet();
                Classification label = classify(program, explored);
                long at = (System.nanoTime() - start) / 1_000_000L;
                if (label.explained()) {
                    if (label.kind() == Classification.Kind.COMPOSITION) {
                        compositions.merge(label.steps(), new Composition(label.steps(), 1, at, index), Composition::plus);
                    }
                    for (Race race : label.races()) {
                        rediscoveries.merge(race, new Rediscovery(race, 1, at, index), (a, b) -> new Rediscovery(race, a.count() + 1,
                                Math.min(a.firstAtMillis(), b.firstAtMillis()), a.firstAtMillis() <= b.firstAtMillis() ? a.firstScenario() : b.firstScenario()));
                    }
                    continue;
                }
                Program minimal = shrink(program, label);
                Explored shrunk = explore(minimal, options.fixes(), options.configuration());
                // a finding per invariants and minimal program; a proposal's hazard once per invariants, its first program
                String key = String.join("+", shrunk.invariants()) + " " + (label.proposal() != null ? label.proposal() : minimal);
                findings.putIfAbsent(key, new Finding(findingId(shrunk, minimal), index, program, minimal, shrunk, label.proposal()));
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
                ordered, compositions.values().stream().sorted(java.util.Comparator.comparingInt(Composition::count).reversed()
                        .thenComparing(Composition::chain)).toList(), sorted, expressible(), ran, new java.util.TreeMap<>(bySize));
    }

    private static String findingId(Explored explored, Program minimal) {
        return "Hunt-" + String.join("-", explored.invariants()) + "-" + Integer.toHexString(minimal.toString().hashCode() & 0xfffff);
    }
}
