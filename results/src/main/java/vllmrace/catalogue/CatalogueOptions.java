package vllmrace.catalogue;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import vllmrace.model.deploy.Profile;
import vllmrace.races.Race;
import vllmrace.races.Shard;

/**
 * What {@code ./catalogue} was asked to do, parsed from its arguments. Bad input raises {@link UsageException} with
 * one line that names it; nothing has run yet.
 *
 * @param command  what to do
 * @param races    the races selected (every race when none is named), in registry order
 * @param notes    lines to print before running (a reference that names several races says which)
 * @param shard    the shard selected ({@code --shard I/N}), or {@link Shard#ALL}
 * @param deep     {@code --deep}: JCStress's full JVM-mode matrix, 10x the Lincheck budgets
 * @param runs     {@code --hit-rates --runs N}: back-to-back JCStress runs; {@code --flake N}: back-to-back catalogue runs
 * @param driftPath {@code --drift PATH}, or null
 * @param pinnedPath {@code --drift PATH --pinned DIR}: the pinned upstream texts as {@code <commit>/<file>}, or null
 * @param hunt     {@code --hunt}'s settings (defaults unless it was asked for)
 * @param profile  {@code --profile ID} with {@code --list}: the one deployment profile to show, else null
 * @param bound    {@code --prove --bound B}, else null (each check's own)
 * @param bench    {@code --bench}'s time bounds ({@link BenchArgs#DEFAULTS} unless given)
 */
record CatalogueOptions(Command command, List<Race> races, List<String> notes, Shard shard, boolean deep, int runs, String driftPath,
                        String pinnedPath, HuntArgs hunt, Profile profile, vllmrace.lincheck.prove.Depth bound,
                        BenchArgs bench) {

    enum Command { RUN, LIST, RENDER, HIT_RATES, FLAKE, MUTATION, DRIFT, HUNT, PROVE, BENCH, HELP }

    /**
     * {@code --bench}'s bounds: the plain stress loop's time per run on a reported variant ({@code --time}, the "not found
     * in T s" of the page) and on a fixed one ({@code --fixed-time}).
     */
    record BenchArgs(int loopSeconds, int fixedSeconds) {
        static final BenchArgs DEFAULTS = new BenchArgs(10, 2);
    }

    /** Bad input: the message is the one line the user sees. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    static final int DEFAULT_RUNS = 5;
    static final int DEFAULT_FLAKE_RUNS = 10;

    static CatalogueOptions parse(String... args) throws UsageException {
        Command command = Command.RUN;
        Set<Race> named = new LinkedHashSet<>();
        List<String> notes = new ArrayList<>();
        Shard shard = Shard.ALL;
        boolean deep = false;
        Integer runsGiven = null;
        boolean runsOption = false;
        String drift = null;
        String pinned = null;
        HuntArgs hunt = HuntArgs.defaults();
        boolean huntOption = false;
        Profile profile = null;
        boolean fixesGiven = false;
        vllmrace.lincheck.prove.Depth bound = null;
        String time = null;
        Integer fixedTime = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "-h", "--help" -> command = Command.HELP;
                case "--list" -> command = only(command, Command.LIST, arg);
                case "--render" -> command = only(command, Command.RENDER, arg);
                case "--hit-rates" -> command = only(command, Command.HIT_RATES, arg);
                case "--flake" -> {
                    command = only(command, Command.FLAKE, arg);
                    if (i + 1 < args.length && args[i + 1].matches("[-+]?\\d+")) {
                        runsGiven = runs("--flake", args[++i]);
                    }
                }
                case "--mutation" -> command = only(command, Command.MUTATION, arg);
                case "--drift" -> {
                    command = only(command, Command.DRIFT, arg);
                    drift = value(args, ++i, arg);
                }
                case "--pinned" -> pinned = value(args, ++i, arg);
                case "--hunt" -> command = only(command, Command.HUNT, arg);
                case "--prove" -> command = only(command, Command.PROVE, arg);
                case "--bench" -> command = only(command, Command.BENCH, arg);
                case "--fixed-time" -> fixedTime = HuntArgs.positive(arg, value(args, ++i, arg), 3_600);
                case "--bound" -> bound = bound(value(args, ++i, arg));
                case "--seed" -> {
                    huntOption = true;
                    hunt = new HuntArgs(HuntArgs.seed(value(args, ++i, arg)), hunt.fixesName(), hunt.scenarios(), hunt.seconds(), hunt.scenario());
                }
                case "--profile" -> profile = profile(value(args, ++i, arg));
                case "--fixes" -> {
                    huntOption = true;
                    fixesGiven = true;
                    hunt = new HuntArgs(hunt.seed(), HuntArgs.checkFixes(value(args, ++i, arg)), hunt.scenarios(), hunt.seconds(), hunt.scenario());
                }
                case "--scenarios" -> {
                    huntOption = true;
                    hunt = new HuntArgs(hunt.seed(), hunt.fixesName(), HuntArgs.positive(arg, value(args, ++i, arg), 100_000_000), hunt.seconds(), hunt.scenario());
                }
                case "--time" -> time = value(args, ++i, arg); // --hunt's or --bench's: read once the command is known
                case "--scenario" -> {
                    huntOption = true;
                    int index = Integer.parseInt(numeric(value(args, ++i, arg), arg));
                    hunt = new HuntArgs(hunt.seed(), hunt.fixesName(), hunt.scenarios(), hunt.seconds(), index);
                }
                case "--deep" -> deep = true;
                case "--shard" -> shard = shard(value(args, ++i, arg));
                case "--runs" -> {
                    runsOption = true;
                    runsGiven = runs(arg, value(args, ++i, arg));
                }
                default -> {
                    if (arg.startsWith("--shard=")) {
                        shard = shard(arg.substring("--shard=".length()));
                    } else if (arg.startsWith("-")) {
                        throw new UsageException("unknown option '" + arg + "' (./catalogue --help lists them)");
                    } else {
                        for (String id : arg.split("[\\s,]+")) {
                            if (!id.isBlank()) {
                                named.addAll(lookup(id, notes));
                            }
                        }
                    }
                }
            }
        }
        if (runsOption && command != Command.HIT_RATES && command != Command.BENCH && command != Command.HELP) {
            throw new UsageException("--runs belongs to --hit-rates and --bench (--flake takes its count as --flake N)");
        }
        BenchArgs bench = BenchArgs.DEFAULTS;
        if (time != null && command == Command.BENCH) {
            bench = new BenchArgs(HuntArgs.positive("--time", time, 3_600), bench.fixedSeconds());
        } else if (time != null) {
            huntOption = true;
            hunt = new HuntArgs(hunt.seed(), hunt.fixesName(), hunt.scenarios(), HuntArgs.positive("--time", time, 86_400), hunt.scenario());
        }
        if (fixedTime != null && command != Command.BENCH && command != Command.HELP) {
            throw new UsageException("--fixed-time belongs to --bench");
        }
        if (fixedTime != null) {
            bench = new BenchArgs(bench.loopSeconds(), fixedTime);
        }
        if (command == Command.BENCH && (deep || !shard.equals(Shard.ALL))) {
            throw new UsageException("--bench takes races, --runs, --time and --fixed-time; no --shard or --deep");
        }
        int runs = runsGiven != null ? runsGiven : command == Command.FLAKE ? DEFAULT_FLAKE_RUNS : DEFAULT_RUNS;
        if (command == Command.HELP) {
            return new CatalogueOptions(Command.HELP, List.of(), List.of(), shard, deep, runs, null, null, hunt, null, null, bench);
        }
        if (profile != null && command != Command.HUNT && command != Command.LIST) {
            throw new UsageException("--profile belongs to --hunt and --list (a catalogue run computes every profile)");
        }
        if (profile != null && fixesGiven) {
            throw new UsageException("--profile and --fixes: give one (a profile is vLLM main's merged fixes under its configuration)");
        }
        if (profile != null && command == Command.HUNT) {
            hunt = new HuntArgs(hunt.seed(), profile.id(), hunt.scenarios(), hunt.seconds(), hunt.scenario());
        }
        if (huntOption && command != Command.HUNT) {
            throw new UsageException("--seed, --fixes, --scenarios, --time and --scenario belong to --hunt");
        }
        if (command == Command.HUNT && (!named.isEmpty() || deep)) {
            throw new UsageException("--hunt draws its own scenarios: it takes no race or --deep");
        }
        if (command == Command.HUNT && hunt.scenario() >= 0 && !shard.equals(Shard.ALL)) {
            throw new UsageException("--scenario reproduces one program of the seed: it takes no --shard");
        }
        if (command == Command.HUNT) {
            hunt = hunt.withShard(shard); // the shard splits the seed's programs, not the races
        }
        if (command == Command.MUTATION && (!named.isEmpty() || deep || !shard.equals(Shard.ALL))) {
            throw new UsageException("--mutation runs over the whole model: it takes no race, --shard or --deep");
        }
        if (bound != null && command != Command.PROVE) {
            throw new UsageException("--bound belongs to --prove");
        }
        if (command == Command.PROVE && (!named.isEmpty() || deep || !shard.equals(Shard.ALL))) {
            throw new UsageException("--prove runs every check under every fix set: it takes no race, --shard or --deep (only --bound)");
        }
        if (pinned != null && command != Command.DRIFT) {
            throw new UsageException("--pinned belongs to --drift (a directory of pinned upstream texts, <commit>/<file>)");
        }
        if (command == Command.DRIFT && (!named.isEmpty() || deep || !shard.equals(Shard.ALL))) {
            throw new UsageException("--drift takes one path, a vLLM checkout, and no race, --shard or --deep");
        }
        List<Race> races = new ArrayList<>();
        for (Race race : Race.values()) {
            if ((named.isEmpty() || named.contains(race)) && shard.includes(race)) {
                races.add(race);
            }
        }
        if (!named.isEmpty() && races.isEmpty()) {
            throw new UsageException("no race named here is in shard " + shard);
        }
        return new CatalogueOptions(command, List.copyOf(races), List.copyOf(notes), shard, deep, runs, drift, pinned, hunt,
                command == Command.LIST ? profile : null, bound, bench);
    }

    /** A {@code --bound} value: shape, mixed:N or whole:N, else one line naming them. */
    static vllmrace.lincheck.prove.Depth bound(String text) throws UsageException {
        try {
            return vllmrace.lincheck.prove.Depth.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--bound: " + e.getMessage());
        }
    }

    /** A {@code --profile} value: a known profile id, else one line naming them. */
    static Profile profile(String id) throws UsageException {
        try {
            return Profile.byId(id);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--profile: " + e.getMessage());
        }
    }

    private static Command only(Command current, Command next, String arg) throws UsageException {
        if (current != Command.RUN && current != Command.HELP && current != next) {
            throw new UsageException("'" + arg + "' cannot be combined with --" + current.name().toLowerCase().replace('_', '-'));
        }
        return current == Command.HELP ? current : next;
    }

    private static String value(String[] args, int i, String option) throws UsageException {
        if (i >= args.length || args[i].startsWith("--")) {
            throw new UsageException(option + " needs a value (./catalogue --help)");
        }
        return args[i];
    }

    private static String numeric(String text, String option) throws UsageException {
        if (!text.matches("\\d{1,9}")) {
            throw new UsageException(option + ": a scenario index (0 or more), got '" + text + "'");
        }
        return text;
    }

    private static Shard shard(String text) throws UsageException {
        try {
            return Shard.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--shard: " + e.getMessage());
        }
    }

    private static int runs(String option, String text) throws UsageException {
        try {
            int runs = Integer.parseInt(text);
            if (runs >= 1 && runs <= 100) {
                return runs;
            }
        } catch (NumberFormatException e) {
            // falls through to the one-line message
        }
        throw new UsageException(option + ": a number of runs from 1 to 100, got '" + text + "'");
    }

    private static List<Race> lookup(String id, List<String> notes) throws UsageException {
        try {
            List<Race> races = RaceLookup.lookup(id);
            if (races.size() > 1) {
                notes.add("'" + id + "' names " + races.size() + " races: "
                        + String.join(", ", races.stream().map(Enum::name).toList()));
            }
            return races;
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    static final String HELP = """
            Usage: ./catalogue [RACE | #PR | 'seed 003' ...] [--shard I/N] [--deep]
                   ./catalogue --flake [N] [RACE ...] [--shard I/N] [--deep]
                   ./catalogue --list [--profile ID] | --render | --hit-rates [--runs N] [RACE ...] | --mutation | --drift PATH [--pinned DIR] | --help
                   ./catalogue --hunt [--profile ID | --fixes all|none|FIX,...] [--seed N] [--scenarios N] [--time SECONDS] [--shard I/N | --scenario I]
                   ./catalogue --prove [--bound shape|mixed:N|whole:N]
                   ./catalogue --bench [RACE ...] [--runs N] [--time SECONDS] [--fixed-time SECONDS]

            Reproduces each race of the registry under every engine (every step interleaving, Lincheck, JCStress) and
            fix set (reported, fixed, vLLM main on each deployment profile), prints the verdicts and each
            counterexample's model steps, and merges the evidence into results/ (rows, traces, replays and JCStress
            pages of other races are kept). Profiles (vLLM main's merged fixes under one configuration):
            main (upstream defaults), main-ids-not-randomized (VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1),
            main-oot-lmcache (LMCache's own MP connector as the LMCache child), main-sync-scheduling
            (async_scheduling=False: the sync Scheduler, one batch in flight).

              RACE, #PR, 'seed 003'  only these races (an upstream reference may name several: all are run)
              --shard I/N            one of N disjoint shards of the races and their cells (for a CI matrix)
              --deep                 JCStress's full JVM-mode matrix, 10x the Lincheck budgets (much slower)
              --list                 every race: id, component, upstream, vLLM-main verdict per profile (expected,
                                     and the last run where it differs); --profile ID: that profile only
              --render               re-render results/README.md and the README race table from results/*.tsv
              --hit-rates [--runs N] N back-to-back JCStress runs (default 5) of the reported variants: violating
                                     samples per million and how often the relaunch fired -> results/jcstress-hit-rates.md
              --flake [N]            every verdict cell N times back to back (default 10; JCStress relaunched each
                                     time): per cell, runs passed, samples and violating rate -> results/flakiness.md
                                     (exit 1 if any cell did not pass every run; no other result is written)
              --mutation             PIT over the model's fix sites and detectors (about 5 minutes): the score and
                                     each surviving mutant with its reason -> results/mutation.md (exit 1 under 95 %)
              --drift PATH           each pinned upstream function looked up in the vLLM checkout at PATH: unchanged,
                                     changed (with a diff) or gone, and the races to re-check (exit 1 if any moved);
                                     a pinned file not in PATH is reported missing. Each pin is a file version plus
                                     the merged PRs the model mirrors from their diffs; both are printed. --pinned DIR:
                                     the pinned texts for the diffs, as DIR/<commit>/<file> (a checkout without git)
              --hunt                 generate scenarios over the model (two actors, up to three requests), explore
                                     every step interleaving, shrink each violation and classify it against the
                                     catalogue -> results/hunt/<profile or fixes>/ (exit 1 when something outside the
                                     catalogue is found). --profile ID (default main), or --fixes all, none or
                                     FIX,FIX (upstream's default configuration); --seed (default
                                     20261201); bounds --scenarios (default 1000000) and --time (default 240 s);
                                     --scenario I reproduces program I of the seed with its interleavings;
                                     --shard I/N takes the seed's programs i with i % N == I - 1 (disjoint shards of
                                     one seed, merged into one summary as each shard lands)
              --prove                every linearizability check, bounded-exhaustively: every program of the bound,
                                     every interleaving, each history against the sequential specification; rows:
                                     every fix, each profile of vLLM main, each race reported and each of its closers
                                     alone -> results/linearizability.md (exit 1 if a verdict is not the registry's).
                                     --bound: shape, mixed:N (N more calls than the shape, mixed) or whole:N (N calls
                                     per thread of the whole alphabet); default per check (see the page)
              --bench                each race's time to its first counterexample, side by side: the step enumerator,
                                     Lincheck and a plain stress loop (two fresh threads per iteration) in this JVM, one
                                     untimed warm-up then --runs N timed runs each (default 5, medians); JCStress, N
                                     launches of every selected race; Fray (POS, PCT) through fray-tests/bench when the
                                     checkout has it and a JDK 25 is found (else the page says why not); and what each
                                     explored of the fixed variant in how long -> results/performance.md and
                                     performance.svg (exit 1 on a modelling error or a violated fixed variant).
                                     --time: the loop's bound per run (default 10 s); --fixed-time: on a fixed variant
                                     (default 2 s). About 10 minutes on 2 CPUs for every race
              --help                 this text

            Examples:
              ./catalogue                                 every race (about 7 and a half minutes on 2 CPUs)
              ./catalogue DoubleFreeOnAbortedAsyncSave    one race
              ./catalogue '#32255'                        both races of #32255
              ./catalogue --shard 2/4                     the second of four CI shards
              ./catalogue --hunt                          the race hunt on vLLM main's fixes, 4 minutes
              ./catalogue --hunt --fixes none --time 60   the self-check: every fix off
              ./catalogue --hunt --profile main-ids-not-randomized   the hunt on that deployment

            Exit codes: 0 every verdict is what the catalogue expects (--hunt: nothing outside the catalogue found);
            1 a verdict differs (they are listed at the end; --hunt: a finding); 2 bad input (one line names it);
            3 the suite did not build.
            """;
}
