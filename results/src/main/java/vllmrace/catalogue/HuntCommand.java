package vllmrace.catalogue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import vllmrace.hunt.Hunt;
import vllmrace.hunt.Program;
import vllmrace.model.detect.Settle;
import vllmrace.model.detect.Violation;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;
import vllmrace.races.Shard;

/**
 * {@code ./catalogue --hunt}: the race hunt ({@link Hunt}) with its seed and bounds; prints the figures, each
 * rediscovery and each finding, and writes {@code results/hunt/<fixes>/README.md} (the summary) and one page per finding.
 * With {@code --scenario I} it reproduces program I of the seed: every interleaving, the first violating one's steps, and
 * the classification. Exit 0 when nothing outside the catalogue was found, 1 otherwise.
 */
final class HuntCommand {
    private final HuntArgs args;
    private final Path results;
    private final Terminal out = new Terminal();

    HuntCommand(HuntArgs args, Path results) {
        this.args = args;
        this.results = results;
    }

    int run() {
        if (args.scenario() >= 0) {
            return reproduce();
        }
        int threads = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
        Hunt.Options options = new Hunt.Options(args.seed(), args.fixes(), args.configuration(), args.fixesName(), args.scenarios(),
                args.seconds() * 1000L, threads, args.shard());
        out.line("Race hunt: seed " + args.seed() + ", " + args.describe() + " " + args.fixes()
                + (args.configuration().equals(vllmrace.model.deploy.Configuration.DEFAULT) ? "" : ", configuration " + args.configuration())
                + ", at most "
                + args.scenarios() + " scenarios or " + args.seconds() + " s, " + threads + " thread(s)"
                + (args.shard().equals(Shard.ALL) ? "" : ", shard " + args.shard() + " (programs i with i % " + args.shard().count()
                + " == " + (args.shard().index() - 1) + ")"));
        Hunt.Report report = new Hunt(options).run();
        out.line(String.format(Locale.ROOT, "explored %,d scenarios, %,d interleavings in %.1f s (%,.0f interleavings/s); "
                        + "%,d scenarios violate, %,d interleavings ended in a modelling error", report.scenarios(), report.interleavings(),
                report.millis() / 1000.0, report.interleavingsPerSecond(), report.violatingScenarios(), report.modellingErrors()));
        for (Hunt.Rediscovery r : report.rediscoveries().values()) {
            out.line("  rediscovered " + r.race().name() + ": " + r.count() + " scenario(s), first after "
                    + String.format(Locale.ROOT, "%.1f s", r.firstAtMillis() / 1000.0) + " (scenario " + r.firstScenario() + ")");
        }
        for (Hunt.Composition c : report.compositions()) {
            out.line("  composed " + c.chain() + ": " + c.count() + " scenario(s), first after "
                    + String.format(Locale.ROOT, "%.1f s", c.firstAtMillis() / 1000.0) + " (scenario " + c.firstScenario() + ")");
        }
        for (Hunt.Finding f : report.findings()) {
            out.line((f.outsideCatalogue() ? "  FINDING " : "  HAZARD of the proposal " + f.hazardOf() + " ") + f.id() + ": " + f.minimal());
            f.explored().violations().forEach(v -> out.detail("    " + v));
        }
        Path dir = results.resolve("hunt").resolve(args.fixesName().replace(',', '+'));
        HuntTally merged = write(dir, report);
        long outside = report.findings().stream().filter(Hunt.Finding::outsideCatalogue).count();
        long hazards = report.findings().size() - outside;
        out.line((outside == 0 ? "No finding outside the catalogue. " : outside + " finding(s). ")
                + (hazards == 0 ? "" : hazards + " hazard(s) of proposals (clean with that proposal off). ")
                + "Summary: " + results.getParent().relativize(dir.resolve("README.md"))
                + (args.shard().equals(Shard.ALL) ? "" : " (shards merged: " + merged.shards().size() + " of " + merged.count()
                + (merged.complete() ? "" : "; missing " + merged.missing().stream().map(Shard::toString).collect(Collectors.joining(", "))) + ")"));
        return outside == 0 ? 0 : 1;
    }

    private int reproduce() {
        Program program = Hunt.program(args.seed(), args.scenario());
        Hunt hunt = new Hunt(new Hunt.Options(args.seed(), args.fixes(), args.configuration(), args.fixesName(), 1, 1, 1));
        Hunt.Explored explored = Hunt.explore(program, args.fixes(), args.configuration());
        out.line("Scenario " + args.scenario() + " of seed " + args.seed() + ", " + args.describe() + ": " + program);
        out.line(explored.violating() + " of all " + explored.schedules() + " step interleavings violate"
                + (explored.modellingErrors() > 0 ? "; " + explored.modellingErrors() + " end in a modelling error" : ""));
        if (!explored.violates()) {
            return 0;
        }
        out.line("first violating interleaving (fewest switches between the actors), " + explored.firstViolating() + ":");
        numbered(explored.steps()).forEach(out::detail);
        explored.violations().forEach(v -> out.detail("detector: " + v));
        Hunt.Classification label = hunt.classify(program, explored);
        boolean finding = label.kind() == Hunt.Classification.Kind.FINDING;
        out.line(label.describe() + (finding ? ". " + whatFixesDo(program) : ""));
        return finding ? 1 : 0;
    }

    private static List<String> numbered(List<String> steps) {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            lines.add(String.format(Locale.ROOT, "%3d. %s", i + 1, steps.get(i)));
        }
        return lines;
    }

    /**
     * Writes this run's shard file and finding pages and re-renders the summary from every shard of the same hunt present
     * in {@code dir}. A whole run (no {@code --shard}), the first shard written there, or a shard of a different hunt than
     * the files there (another seed, deployment, bound or shard count), first clears the directory; a shard run again
     * replaces its own pages only.
     */
    private HuntTally write(Path dir, Hunt.Report report) {
        Map<String, HuntTally.Seen> seen = new LinkedHashMap<>();
        report.rediscoveries().forEach((race, d) -> seen.put(race.name(), new HuntTally.Seen(d.count(), d.firstAtMillis(), d.firstScenario())));
        Map<String, HuntTally.Seen> composed = new LinkedHashMap<>();
        report.compositions().forEach(c -> composed.put(HuntTally.chainKey(c.steps()), new HuntTally.Seen(c.count(), c.firstAtMillis(),
                c.firstScenario())));
        Map<String, String> lines = new LinkedHashMap<>();
        for (Hunt.Finding f : report.findings()) {
            Map<Fix, List<Race>> single = Hunt.singleFixesRemoving(f.minimal(), report.options().fixes(), report.options().configuration());
            lines.put(f.id(), (f.outsideCatalogue() ? "" : HAZARD_LINE + f.hazardOf() + " (" + f.hazardOf().upstream() + "): ")
                    + f.minimal() + (single.isEmpty() ? "" : "; removed by " + single.keySet().stream().map(Fix::name)
                    .collect(Collectors.joining(" or ")) + " alone") + " (shard " + args.shard() + ", scenario " + f.scenario() + ")");
        }
        HuntTally mine = HuntTally.of(args, report.options().threads(), report.scenarios(), report.interleavings(), report.millis(),
                report.violatingScenarios(), report.modellingErrors(), seen, composed, lines, report.bySize());
        Path shardsDir = dir.resolve("shards");
        try {
            Map<Path, HuntTally> present = readShards(shardsDir);
            // a whole run, the first shard file (pages there are an older run's), or a shard of another hunt: start afresh
            boolean fresh = args.shard().equals(Shard.ALL) || present.isEmpty() || present.values().stream()
                    .anyMatch(t -> !t.hunt().equals(mine.hunt()) || t.count() != mine.count());
            List<HuntTally> others = new ArrayList<>();
            Set<String> oldPages = new HashSet<>();
            for (Map.Entry<Path, HuntTally> e : present.entrySet()) {
                if (!fresh && e.getValue().shards().equals(mine.shards())) {
                    oldPages.addAll(e.getValue().findings().keySet());
                } else if (!fresh) {
                    others.add(e.getValue());
                }
            }
            if (fresh) {
                deleteAll(dir, ".md");
                deleteAll(shardsDir, ".tsv");
            } else {
                others.forEach(t -> oldPages.removeAll(t.findings().keySet()));
                for (String id : oldPages) {
                    Files.deleteIfExists(dir.resolve(id + ".md"));
                }
            }
            Files.createDirectories(shardsDir);
            Files.writeString(shardsDir.resolve(args.shard().index() + "-of-" + args.shard().count() + ".tsv"), mine.toTsv(),
                    StandardCharsets.UTF_8);
            for (Hunt.Finding f : report.findings()) {
                Files.writeString(dir.resolve(f.id() + ".md"), finding(f), StandardCharsets.UTF_8);
            }
            List<HuntTally> all = new ArrayList<>(others);
            all.add(mine);
            HuntTally merged = HuntTally.merge(all);
            Files.writeString(dir.resolve("README.md"), summary(merged, report.options()), StandardCharsets.UTF_8);
            return merged;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The shard files in {@code shardsDir}; one this command cannot read counts as another hunt's (it is replaced). */
    private static Map<Path, HuntTally> readShards(Path shardsDir) throws IOException {
        Map<Path, HuntTally> tallies = new TreeMap<>();
        if (!Files.isDirectory(shardsDir)) {
            return tallies;
        }
        try (var files = Files.list(shardsDir)) {
            for (Path p : files.filter(f -> f.getFileName().toString().endsWith(".tsv")).toList()) {
                try {
                    tallies.put(p, HuntTally.parse(Files.readAllLines(p, StandardCharsets.UTF_8)));
                } catch (IllegalArgumentException e) {
                    tallies.put(p, new HuntTally("unreadable " + p.getFileName(), List.of(1), 1, 1, 0, 0, 0, 0, 0, 0, Map.of(), Map.of(), Map.of(), Map.of()));
                }
            }
        }
        return tallies;
    }

    private static void deleteAll(Path dir, String suffix) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (var old = Files.list(dir)) {
            for (Path p : old.toList()) {
                if (p.getFileName().toString().endsWith(suffix)) {
                    Files.delete(p);
                }
            }
        }
    }

    private String summary(HuntTally r, Hunt.Options o) {
        StringBuilder b = new StringBuilder();
        b.append("# Race hunt, ").append(args.describe().replaceFirst(" (.*)", " `$1`")).append("\n\n");
        HuntArgs whole = args.withShard(Shard.ALL);
        if (r.count() == 1) {
            b.append("Written by `").append(whole.commandLine()).append("`.");
        } else {
            b.append("Written by `").append(whole.commandLine()).append(" --shard I/").append(r.count()).append("`, shards ")
                    .append(r.shards().stream().map(i -> i + "/" + r.count()).collect(Collectors.joining(", ")))
                    .append(r.complete() ? " (every shard merged)" : " (incomplete: shards " + r.missing().stream().map(Shard::toString)
                            .collect(Collectors.joining(", ")) + " not run yet)").append(". Shard I takes the seed's programs i with "
                            + "i % ").append(r.count()).append(" == I - 1; the shards are disjoint and, complete, cover the unsharded run's "
                            + "programs.");
        }
        b.append(" Fixes on: ").append(o.fixes()).append("; configuration: ").append(o.configuration()).append(".\n\n");
        b.append("Each scenario is a program drawn from the seed: one to three requests (prompt blocks, length, a stop token, "
                + "local / remote prefill / a chunk being written, what the connector saves, a store job) over a pool that fits each request "
                + "alone, an async batch queue of 2 or 3 (one under the sync scheduler), a connector on the decode side "
                + "(kv_consumer), the prefill side (kv_producer) or an offloader (kv_both), "
                + "up to two busy-loop iterations of set-up, and two actors of up to three operations (actor 1: abort, "
                + "resubmit, a chunk written, a remote side that never pushes followed by the client's abort, the store thread "
                + "reading a store job, transfers "
                + "completing; actor 2: busy-loop iterations and transfers completing). Every step interleaving of each runs on "
                + "a fresh EngineCore process with the step enumerator; the arbiter lets every transfer and write complete and "
                + "settles the engine (" + Settle.SETTLED_ITERATIONS + " quiet iterations within " + Settle.MAX_ITERATIONS
                + "), so liveness is checked too. A violation is shrunk (fewest operations, requests, set-up iterations) and "
                + "classified: a rediscovery of a catalogued race when every fix on removes it and that race's closers are what "
                + "it needs; a composition when catalogued races explain it in turn (the first race's closers change what breaks, "
                + "the next race explains that, until the last one's closers leave every interleaving clean); a finding otherwise. "
                + "A configuration switch that takes a fix's code path away (request-id randomization disabled takes #27987's) "
                + "counts as that fix off: closing the race drops the switch. An upstream assert that kills EngineCore ends the "
                + "drain: the model's iterations past it are not upstream's, so their not settling is no modelling error and no "
                + "liveness is judged. One program in " + Hunt.FRONTEND_ONE_IN + " is of the frontend world instead: AsyncLLM and "
                + "the EngineCore behind it, the client's request X (n 1 or 2, one to three tokens, a stop string or none), up to "
                + "two set-up rounds, then the client's calls (add_request(X) again, abort(X) by its external id, generate()'s "
                + "cancellation by internal id) against EngineCore's iterations and the output handler's passes, each coroutine "
                + "yielding where the deployment's yield conditions make upstream suspend. Of the other programs, one in "
                + Hunt.CONNECTOR_ONE_IN_THE_REST + " is of the connector world: an EngineCore whose connector is a "
                + "MultiConnector of one or two children (NIXL in one role: the decode side pulling or pushed to, the prefill "
                + "side pulled from or pushing under a lease, the bidirectional decode side holding turn-1 blocks; the LMCache "
                + "MP connector, in tree or LMCache's own as the deployment says, saving nothing or every finished request; an "
                + "offloader saving every finished request), one or two requests (a remote prefill NIXL pulls, whose handshake "
                + "may fail, or pushes; a prompt the LMCache children have cached; or both), then the client's aborts, the "
                + "workers' loads landing and NIXL pulls failing, the failing handshakes failing, the remote side's READs of "
                + "held blocks, D's heartbeats, a push's WRITEs posted, completing or failing, a pushing rank's WRITE landing or "
                + "its post failing, and every transfer completing, against the busy loop. A decode frontend cancelling before "
                + "its prefill side's lease ends (two engines), heterogeneous-TP handles, prefill context parallelism and the "
                + "job-based offloader are in no world.\n\n");
        b.append("| figure | value |\n|---|---|\n");
        b.append("| scenarios explored | ").append(String.format(Locale.ROOT, "%,d", r.scenarios())).append(" |\n");
        b.append("| interleavings explored | ").append(String.format(Locale.ROOT, "%,d", r.interleavings())).append(" |\n");
        if (r.count() == 1) {
            b.append("| wall time | ").append(String.format(Locale.ROOT, "%.1f s", r.millis() / 1000.0)).append(" (")
                    .append(r.threads()).append(" thread(s)) |\n");
        } else {
            b.append("| wall time | ").append(String.format(Locale.ROOT, "%.1f s summed over the shards, %.1f s the longest", r.millis() / 1000.0,
                    r.longestMillis() / 1000.0)).append(" (").append(r.threads()).append(" thread(s) each) |\n");
        }
        b.append("| interleavings per second | ").append(String.format(Locale.ROOT, "%,.0f", r.interleavingsPerSecond()))
                .append(r.count() == 1 ? "" : " (per shard)").append(" |\n");
        b.append("| violating scenarios | ").append(String.format(Locale.ROOT, "%,d", r.violating())).append(" |\n");
        b.append("| interleavings ending in a modelling error | ").append(r.modellingErrors()).append(" |\n");
        b.append("| violating scenarios explained by a composition | ").append(String.format(Locale.ROOT, "%,d",
                r.compositions().values().stream().mapToInt(HuntTally.Seen::count).sum())).append(" |\n");
        long hazards = r.findings().values().stream().filter(line -> line.startsWith(HAZARD_LINE)).count();
        b.append("| findings (outside the catalogue) | ").append(r.findings().size() - hazards).append(" |\n");
        b.append("| hazards of proposals (violations clean with that unmerged proposal off) | ").append(hazards).append(" |\n\n");
        b.append(throughput(r)).append('\n');
        b.append("## Rediscoveries\n\nA race counts in every scenario it explains, alone or in a composition.\n\n"
                + "| race | scenarios | first after | first scenario |\n|---|---|---|---|\n");
        r.rediscoveries().forEach((race, d) -> b.append("| `").append(race).append("` | ").append(d.count()).append(" | ")
                .append(String.format(Locale.ROOT, "%.1f s", d.firstAtMillis() / 1000.0)).append(r.count() == 1 ? "" : " (in its shard)")
                .append(" | ").append(d.firstScenario()).append(" |\n"));
        b.append('\n').append(coverage(r, o)).append("\n\n");
        if (!r.compositions().isEmpty()) {
            b.append("## Compositions\n\nViolations catalogued races explain in turn: each race's closers, switched on, change what "
                    + "the program breaks, and the next race explains what it breaks then; the last one's closers leave it clean.\n\n"
                    + "| races, in order | scenarios | first after | first scenario |\n|---|---|---|---|\n");
            r.compositions().entrySet().stream().sorted(Map.Entry.<String, HuntTally.Seen>comparingByValue(
                    java.util.Comparator.comparingInt(HuntTally.Seen::count).reversed()).thenComparing(Map.Entry.comparingByKey()))
                    .forEach(e -> b.append("| ").append(new Hunt.Composition(HuntTally.chain(e.getKey()), 1, 0, 0).chain()).append(" | ")
                            .append(e.getValue().count()).append(" | ")
                            .append(String.format(Locale.ROOT, "%.1f s", e.getValue().firstAtMillis() / 1000.0))
                            .append(r.count() == 1 ? "" : " (in its shard)").append(" | ").append(e.getValue().firstScenario()).append(" |\n"));
            b.append('\n');
        }
        b.append("## Findings\n\n");
        if (r.findings().isEmpty()) {
            b.append("None: every violation is explained by a catalogued race.\n");
        } else if (hazards == r.findings().size()) {
            b.append("None outside the catalogue. Each page below is the hazard of a proposal: what its own code path does, "
                    + "shown only with it on (vLLM main does not run it).\n\n");
        }
        r.findings().forEach((id, line) -> b.append("- [").append(id).append("](").append(id).append(".md): ").append(line).append("\n"));
        return b.toString();
    }

    /**
     * How exploring grows with program size (operations, requests, set-up iterations, a deeper queue, a producer role):
     * per size, the programs, their mean interleavings, and interleavings per second of one thread's exploring.
     */
    private static String endStates(Hunt.Throughput t) {
        return t.distinctEnds() == 0 ? "-" : String.format(Locale.ROOT, "%.2f", t.interleavingsPerEndState());
    }

    static String throughput(HuntTally r) {
        StringBuilder b = new StringBuilder("## Throughput by program size\n\nExploring only (classification and shrinking left "
                + "out), per thread: the time each program's interleavings took on the thread that ran them. The last column "
                + "bounds partial-order reduction: a program's interleavings end in fewer distinct end states (the outcome, every "
                + "detector finding in words, the scheduler's progress signature), and a reduction that keeps every verdict runs "
                + "at least one interleaving per end state, so it could divide the interleavings by this much at most (the "
                + "signature may merge end states a finer one would tell apart, which only raises the bound).\n\n"
                + "| program size | programs | interleavings per program | interleavings per second per thread "
                + "| interleavings per distinct end state |\n|---|---|---|---|---|\n");
        r.bySize().forEach((size, t) -> b.append("| ").append(size).append(" | ").append(String.format(Locale.ROOT, "%,d", t.programs()))
                .append(" | ").append(String.format(Locale.ROOT, "%.1f", (double) t.interleavings() / t.programs())).append(" | ")
                .append(String.format(Locale.ROOT, "%,.0f", t.interleavingsPerThreadSecond())).append(" | ")
                .append(endStates(t)).append(" |\n"));
        Hunt.Throughput all = r.bySize().values().stream().reduce(new Hunt.Throughput(0, 0, 0, 0), Hunt.Throughput::plus);
        b.append("| all | ").append(String.format(Locale.ROOT, "%,d", all.programs())).append(" | ")
                .append(all.programs() == 0 ? "-" : String.format(Locale.ROOT, "%.1f", (double) all.interleavings() / all.programs()))
                .append(" | ").append(String.format(Locale.ROOT, "%,.0f", all.interleavingsPerThreadSecond())).append(" | ")
                .append(endStates(all)).append(" |\n");
        return b.toString();
    }

    /**
     * Which catalogued races this hunt rediscovered of those it can express under its fixes and deployment, which of its
     * world's races cannot show under them, and which races its world does not hold, with why.
     */
    static String coverage(HuntTally r, Hunt.Options o) {
        Hunt hunt = new Hunt(o);
        List<Race> expressible = hunt.expressible();
        List<String> found = expressible.stream().map(Race::name).filter(r.rediscoveries()::containsKey).toList();
        List<String> missed = expressible.stream().map(Race::name).filter(x -> !r.rediscoveries().containsKey(x)).toList();
        List<String> composed = hunt.expressibleOnlyInAComposition().stream().map(Race::name).toList();
        List<String> cannot = Hunt.inWorld().stream().filter(x -> !expressible.contains(x)).map(Race::name).toList();
        StringBuilder b = new StringBuilder("**Coverage.** ");
        b.append(found.size()).append(" of the ").append(expressible.size()).append(" catalogued races this hunt can express under its "
                + "fixes and deployment rediscovered").append(expressible.isEmpty() ? "" : String.format(Locale.ROOT, " (%.0f %%)",
                100.0 * found.size() / expressible.size())).append("; not rediscovered: ").append(missed.isEmpty() ? "none" : String.join(", ", missed))
                .append(". Of those it can express, these show only in a composition (under these fixes their window is shut "
                + "until another race's closer opens it): ").append(composed.isEmpty() ? "none" : String.join(", ", composed))
                .append(". In its world but unable to show here (a fix on closes it, or its own scenario breaks none of its "
                + "invariants on this deployment, as an AsyncScheduler race under the sync scheduler): ")
                .append(cannot.isEmpty() ? "none" : String.join(", ", cannot));
        List<String> anyway = cannot.stream().filter(r.rediscoveries()::containsKey).toList();
        b.append(anyway.isEmpty() ? "" : "; of these, rediscovered by another path than their own scenario's: " + String.join(", ", anyway))
                .append(". Outside its world: ");
        Hunt.OUTSIDE_WORLD.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> b.append(e.getKey().name()).append(" (").append(e.getValue()).append("); "));
        b.setLength(b.length() - 2);
        List<String> beyond = r.rediscoveries().keySet().stream().filter(x -> Hunt.inWorld().stream().noneMatch(w -> w.name().equals(x)))
                .sorted().toList();
        b.append(beyond.isEmpty() ? "." : ", of which it rediscovered through the scheduler's side of their window: "
                + String.join(", ", beyond) + ".");
        return b.toString();
    }

    /** What the catalogue's fixes do to a finding: none closes it, or which one alone removes it and whose races it closes. */
    private String whatFixesDo(Program program) {
        if (Hunt.explore(program, FixSet.all(), args.configuration()).violates()) {
            return "With every fix of the catalogue on it still violates: no catalogued fix closes it.";
        }
        Map<Fix, List<Race>> single = Hunt.singleFixesRemoving(program, args.fixes(), args.configuration());
        if (single.isEmpty()) {
            return "Every fix on removes it, no single fix does: several catalogued fixes together close it.";
        }
        return "Removed by one fix alone: " + single.entrySet().stream()
                .map(e -> e.getKey() + " (" + e.getKey().upstream() + (e.getValue().isEmpty() ? ""
                        : "; closer of " + e.getValue().stream().map(Race::name).collect(Collectors.joining(", "))) + ")")
                .collect(Collectors.joining(", ")) + ": a catalogued fix, with a symptom none of its races shows.";
    }

    /** How a hazard's line in the shard file and the summary begins. */
    static final String HAZARD_LINE = "hazard of the proposal ";

    private String finding(Hunt.Finding f) {
        StringBuilder b = new StringBuilder();
        b.append("# ").append(f.id()).append("\n\n");
        b.append("Found by `./catalogue --hunt ").append(args.option()).append(" --seed ").append(args.seed())
                .append("` in scenario ").append(f.scenario()).append("; reproduce with `./catalogue --hunt ").append(args.option())
                .append(" --seed ").append(args.seed()).append(" --scenario ").append(f.scenario()).append("` (the program as drawn; "
                + "below, shrunk).\n\n");
        b.append("**Minimal scenario.** ").append(f.minimal()).append("\n\n");
        b.append("**Interleaving** (").append(f.explored().violating()).append(" of ").append(f.explored().schedules())
                .append(" violate; this one, `").append(f.explored().firstViolating()).append("`, switches actors least):\n\n```\n");
        numbered(f.explored().steps()).forEach(l -> b.append(l).append('\n'));
        b.append("```\n\n**Detectors.**\n\n");
        for (Violation v : f.explored().violations()) {
            b.append("- ").append(v).append('\n');
        }
        if (!f.outsideCatalogue()) {
            b.append("\n**Classification.** A hazard of the proposal ").append(f.hazardOf()).append(" (").append(f.hazardOf().upstream())
                    .append(", not merged): with it off and every other fix of the catalogue on, every interleaving is clean, and "
                    + "with every fix on it violates, so no catalogued fix closes it; it is what the proposal's own code path does. "
                    + "vLLM main does not run it. Confirm it against the proposal's diff, then tell its authors, or show it is a "
                    + "modelling artefact.\n");
            return b.toString();
        }
        b.append("\n**Classification.** Not explained by a catalogued race (no race that breaks one of its invariants has closers "
                + "that remove it, and no chain of such races, each exposed by the closers of the one before, up to " + Hunt.MAX_COMPOSITION + " steps long). ").append(whatFixesDo(f.minimal())).append(" Confirm it against upstream source, or show it is a "
                + "modelling artefact.\n\n");
        b.append("**Proposed registry entry.**\n\n```java\n    ").append(f.id().replace('-', '_')).append("(\n")
                .append("            Component.SCHEDULER,\n            \"found by this suite (hunt seed ").append(args.seed())
                .append(", scenario ").append(f.scenario()).append(")\",\n")
                .append("            Closers.of(/* the fix that closes it */),\n            Expectation.BUG_FOUND,\n")
                .append("            /* its scenario: the minimal program above, as a story */ ...),\n```\n");
        return b.toString();
    }
}
