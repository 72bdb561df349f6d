package vllmrace.catalogue;

import java.util.ArrayList;
import java.util.List;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Shard;

/**
 * The hunt's settings from {@code ./catalogue --hunt [--seed N] [--fixes SET] [--scenarios N] [--time SECONDS]
 * [--scenario I]}: every value checked here, so bad input is one line and nothing has run.
 *
 * @param seed      the seed (default {@link #DEFAULT_SEED})
 * @param fixesName a deployment profile's id ({@code main}, the default: vLLM main's merged fixes under its configuration;
 *                  {@code --profile ID}), or {@code all}, {@code none}, or fix names joined by commas (upstream's default
 *                  configuration)
 * @param scenarios the most programs to draw
 * @param seconds   the time bound
 * @param scenario  one program of the seed to reproduce, or -1
 * @param shard     the share of the seed's programs this run takes ({@code --shard I/N}: the indices {@code i % N == I - 1})
 */
record HuntArgs(long seed, String fixesName, int scenarios, int seconds, int scenario, Shard shard) {
    HuntArgs(long seed, String fixesName, int scenarios, int seconds, int scenario) {
        this(seed, fixesName, scenarios, seconds, scenario, Shard.ALL);
    }

    HuntArgs withShard(Shard shard) {
        return new HuntArgs(seed, fixesName, scenarios, seconds, scenario, shard);
    }

    static final long DEFAULT_SEED = 20261201L;
    static final int DEFAULT_SECONDS = 240;
    static final int DEFAULT_SCENARIOS = 1_000_000;

    static HuntArgs defaults() {
        return new HuntArgs(DEFAULT_SEED, "main", DEFAULT_SCENARIOS, DEFAULT_SECONDS, -1);
    }

    FixSet fixes() {
        return fixes(fixesName);
    }

    /** The profile the name is, or null. */
    Profile profile() {
        return Profile.find(fixesName);
    }

    /**
     * The deployment's configuration: the profile's, or for a fix set upstream's defaults under the yield conditions vLLM
     * produces (an output batch over 128 outputs under load), as every profile runs: a hunt explores what a deployment
     * can reach.
     */
    Configuration configuration() {
        Profile profile = profile();
        return profile == null ? Configuration.DEFAULT.withYields(vllmrace.model.asyncio.YieldCondition.producedByVllmMain())
                : profile.configuration();
    }

    /** How the report names what was hunted: {@code profile main} or {@code fixes none}. */
    String describe() {
        return (profile() != null ? "profile " : "fixes ") + fixesName;
    }

    /** The command-line option that reproduces it: {@code --profile main} or {@code --fixes none}. */
    String option() {
        return (profile() != null ? "--profile " : "--fixes ") + fixesName;
    }

    /** The whole command line of this run, shard included. */
    String commandLine() {
        return "./catalogue --hunt " + option() + " --seed " + seed + " --scenarios " + scenarios + " --time " + seconds
                + (shard.equals(Shard.ALL) ? "" : " --shard " + shard);
    }

    static FixSet fixes(String name) {
        if (Profile.find(name) != null) {
            return Profile.find(name).fixes();
        }
        return switch (name) {
            case "all" -> FixSet.all();
            case "none" -> FixSet.none();
            default -> {
                List<Fix> named = new ArrayList<>();
                for (String part : name.split(",")) {
                    named.add(Fix.valueOf(part.trim()));
                }
                yield FixSet.of(named);
            }
        };
    }

    /** Checks a {@code --fixes} value, returning it normalised. */
    static String checkFixes(String value) throws CatalogueOptions.UsageException {
        if (List.of("main", "all", "none").contains(value)) {
            return value;
        }
        List<String> out = new ArrayList<>();
        for (String part : value.split(",")) {
            String name = part.trim();
            try {
                Fix.valueOf(name);
            } catch (IllegalArgumentException e) {
                throw new CatalogueOptions.UsageException("--fixes: no fix '" + name + "'; main, all, none, or fix names joined by "
                        + "commas (a deployment: --profile " + Profile.ids().replace(", ", "|") + ")");
            }
            out.add(name);
        }
        return String.join(",", out);
    }

    static int positive(String option, String text, int max) throws CatalogueOptions.UsageException {
        try {
            long n = Long.parseLong(text);
            if (n >= 1 && n <= max) {
                return (int) n;
            }
        } catch (NumberFormatException e) {
            // the one-line message below
        }
        throw new CatalogueOptions.UsageException(option + ": a number from 1 to " + max + ", got '" + text + "'");
    }

    static long seed(String text) throws CatalogueOptions.UsageException {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new CatalogueOptions.UsageException("--seed: a whole number, got '" + text + "'");
        }
    }
}
