package vllmrace.catalogue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import vllmrace.hunt.Hunt;
import vllmrace.races.Race;
import vllmrace.races.Shard;

/**
 * One hunt run's figures as its shard file keeps them ({@code results/hunt/<name>/shards/I-of-N.tsv}), and their merge
 * over the shards of one hunt: the same seed, deployment, bounds and shard count. Shards share nothing while they run
 * (a CI matrix, several machines); the summary is rendered from whichever shard files are present.
 *
 * @param hunt          what identifies the hunt: seed, deployment option, scenario and time bounds
 * @param shards        the shards this tally covers
 * @param count         N, the hunt's shard count
 * @param millis        wall time per shard, summed
 * @param longestMillis the longest shard's wall time (a matrix's wall time when the shards run at once)
 * @param rediscoveries per race: scenarios, the first time after its shard's start, the lowest such scenario index
 * @param compositions  per chain of races ({@link #chainKey}), the same figures
 * @param bySize        per program size, the programs, their interleavings and the thread time exploring them took
 * @param findings      finding id -> its summary line
 */
record HuntTally(String hunt, List<Integer> shards, int count, int threads, int scenarios, long interleavings, long millis,
                 long longestMillis, int violating, int modellingErrors, Map<String, Seen> rediscoveries,
                 Map<String, Seen> compositions, Map<String, String> findings, Map<Integer, Hunt.Throughput> bySize) {

    /** A race found again: in how many scenarios, how soon after its shard started, and in which scenario first. */
    record Seen(int count, long firstAtMillis, int firstScenario) {
        Seen plus(Seen other) {
            boolean earlier = firstAtMillis < other.firstAtMillis
                    || (firstAtMillis == other.firstAtMillis && firstScenario <= other.firstScenario);
            return new Seen(count + other.count, earlier ? firstAtMillis : other.firstAtMillis,
                    earlier ? firstScenario : other.firstScenario);
        }
    }

    HuntTally {
        shards = List.copyOf(shards);
        rediscoveries = new LinkedHashMap<>(rediscoveries);
        compositions = new LinkedHashMap<>(compositions);
        findings = new LinkedHashMap<>(findings);
        bySize = new TreeMap<>(bySize);
    }

    /** A composition's key in the shard file: its steps in order, joined by {@code >}, a step's races by {@code +}. */
    static String chainKey(List<List<Race>> steps) {
        return steps.stream().map(step -> step.stream().map(Race::name).collect(java.util.stream.Collectors.joining("+")))
                .collect(java.util.stream.Collectors.joining(">"));
    }

    /** The steps of a {@link #chainKey}; refuses a name the registry does not have. */
    static List<List<Race>> chain(String key) {
        return java.util.Arrays.stream(key.split(">", -1))
                .map(step -> java.util.Arrays.stream(step.split("\\+", -1)).map(Race::valueOf).toList()).toList();
    }

    /** The identity of a hunt whose shards may be merged. */
    static String identity(HuntArgs args) {
        return "seed " + args.seed() + ", " + args.option() + ", --scenarios " + args.scenarios() + ", --time " + args.seconds();
    }

    static HuntTally of(HuntArgs args, int threads, int scenarios, long interleavings, long millis, int violating,
                        int modellingErrors, Map<String, Seen> rediscoveries, Map<String, Seen> compositions,
                        Map<String, String> findings, Map<Integer, Hunt.Throughput> bySize) {
        return new HuntTally(identity(args), List.of(args.shard().index()), args.shard().count(), threads, scenarios, interleavings,
                millis, millis, violating, modellingErrors, rediscoveries, compositions, findings, bySize);
    }

    /** Whether every shard of the hunt is here. */
    boolean complete() {
        return shards.size() == count;
    }

    /** The shards not (yet) merged. */
    List<Shard> missing() {
        List<Shard> missing = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            if (!shards.contains(i)) {
                missing.add(new Shard(i, count));
            }
        }
        return missing;
    }

    /** The merge of shards of one hunt; refuses tallies of different hunts or a shard given twice. */
    static HuntTally merge(List<HuntTally> tallies) {
        if (tallies.isEmpty()) {
            throw new IllegalArgumentException("no shard to merge");
        }
        HuntTally first = tallies.get(0);
        List<Integer> shards = new ArrayList<>();
        int scenarios = 0;
        int violating = 0;
        int errors = 0;
        int threads = 0;
        long interleavings = 0;
        long millis = 0;
        long longest = 0;
        Map<String, Seen> seen = new TreeMap<>(Comparator.comparingInt(name -> Race.valueOf(name).ordinal()));
        Map<String, Seen> composed = new TreeMap<>();
        Map<String, String> findings = new TreeMap<>();
        Map<Integer, Hunt.Throughput> sizes = new TreeMap<>();
        for (HuntTally t : tallies) {
            if (!t.hunt.equals(first.hunt) || t.count != first.count) {
                throw new IllegalArgumentException("shards of different hunts: " + first.hunt + " in " + first.count + " shard(s), and "
                        + t.hunt + " in " + t.count);
            }
            for (int s : t.shards) {
                if (shards.contains(s)) {
                    throw new IllegalArgumentException("shard " + s + "/" + t.count + " given twice");
                }
                shards.add(s);
            }
            scenarios += t.scenarios;
            violating += t.violating;
            errors += t.modellingErrors;
            threads = Math.max(threads, t.threads);
            interleavings += t.interleavings;
            millis += t.millis;
            longest = Math.max(longest, t.longestMillis);
            t.rediscoveries.forEach((race, s) -> seen.merge(race, s, Seen::plus));
            t.compositions.forEach((chain, s) -> composed.merge(chain, s, Seen::plus));
            t.bySize.forEach((size, th) -> sizes.merge(size, th, Hunt.Throughput::plus));
            findings.putAll(t.findings);
        }
        shards.sort(null);
        return new HuntTally(first.hunt, shards, first.count, threads, scenarios, interleavings, millis, longest, violating, errors,
                seen, composed, findings, sizes);
    }

    /** The shard file: one field per line, tab-separated. */
    String toTsv() {
        StringBuilder b = new StringBuilder();
        b.append("hunt\t").append(hunt).append('\n');
        b.append("shard\t").append(shards.get(0)).append('/').append(count).append('\n');
        b.append("threads\t").append(threads).append('\n');
        b.append("scenarios\t").append(scenarios).append('\n');
        b.append("interleavings\t").append(interleavings).append('\n');
        b.append("millis\t").append(millis).append('\n');
        b.append("violating\t").append(violating).append('\n');
        b.append("modelling_errors\t").append(modellingErrors).append('\n');
        rediscoveries.forEach((race, s) -> b.append("rediscovery\t").append(race).append('\t').append(s.count).append('\t')
                .append(s.firstAtMillis).append('\t').append(s.firstScenario).append('\n'));
        compositions.forEach((chain, s) -> b.append("composition\t").append(chain).append('\t').append(s.count).append('\t')
                .append(s.firstAtMillis).append('\t').append(s.firstScenario).append('\n'));
        bySize.forEach((size, t) -> b.append("size\t").append(size).append('\t').append(t.programs()).append('\t')
                .append(t.interleavings()).append('\t').append(t.nanos()).append('\t').append(t.distinctEnds()).append('\n'));
        findings.forEach((id, line) -> b.append("finding\t").append(id).append('\t').append(line.replace('\t', ' ').replace('\n', ' '))
                .append('\n'));
        return b.toString();
    }

    /**
     * Reads a shard file written by {@link #toTsv()}.
     *
     * @throws IllegalArgumentException naming the line, for a file this class did not write
     */
    static HuntTally parse(List<String> lines) {
        Map<String, String> fields = new LinkedHashMap<>();
        Map<String, Seen> seen = new LinkedHashMap<>();
        Map<String, Seen> composed = new LinkedHashMap<>();
        Map<String, String> findings = new LinkedHashMap<>();
        Map<Integer, Hunt.Throughput> sizes = new TreeMap<>();
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            try {
                switch (f[0]) {
                    case "rediscovery" -> seen.put(Race.valueOf(f[1]).name(),
                            new Seen(Integer.parseInt(f[2]), Long.parseLong(f[3]), Integer.parseInt(f[4])));
                    case "composition" -> composed.put(chainKey(chain(f[1])),
                            new Seen(Integer.parseInt(f[2]), Long.parseLong(f[3]), Integer.parseInt(f[4])));
                    case "finding" -> findings.put(f[1], f[2]);
                    case "size" -> sizes.put(Integer.parseInt(f[1]), new Hunt.Throughput(Integer.parseInt(f[2]), Long.parseLong(f[3]),
                            Long.parseLong(f[4]), f.length > 5 ? Long.parseLong(f[5]) : 0));
                    default -> fields.put(f[0], f[1]);
                }
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("not a hunt shard line: '" + line + "'", e);
            }
        }
        try {
            Shard shard = Shard.parse(fields.get("shard"));
            long millis = Long.parseLong(fields.get("millis"));
            return new HuntTally(java.util.Objects.requireNonNull(fields.get("hunt"), "hunt"), List.of(shard.index()), shard.count(),
                    Integer.parseInt(fields.get("threads")), Integer.parseInt(fields.get("scenarios")),
                    Long.parseLong(fields.get("interleavings")), millis, millis, Integer.parseInt(fields.get("violating")),
                    Integer.parseInt(fields.get("modelling_errors")), seen, composed, findings, sizes);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("a hunt shard file needs hunt, shard, threads, scenarios, interleavings, millis, "
                    + "violating and modelling_errors: " + e.getMessage(), e);
        }
    }

    double interleavingsPerSecond() {
        return millis == 0 ? 0 : interleavings * 1000.0 / millis;
    }
}
