package vllmrace.races;

import java.util.List;
import vllmrace.model.deploy.Profile;

/**
 * How verdicts read in the results, the catalogue and the generated tests: "bug found" / "clean" for reported and fixed,
 * "racy" or "closed (by #N)" on vLLM main, from the registry's data ({@link Race#closedOnMainBy}, {@link Race#expected}).
 */
public final class Labels {
    private Labels() {
    }

    /**
     * How a verdict reads for this race: "bug found" / "clean" for reported and fixed; on vLLM main (its default
     * profile) "racy" or "closed (by #N)", the merged closers' PRs (a positive control reads "clean (upstream as is)").
     */
    public static String label(Race race, Variant variant, Observed observed) {
        return variant == Variant.UPSTREAM_MAIN ? label(race, Profile.MAIN, observed) : observed.label();
    }

    /** How a verdict on one deployment profile of vLLM main reads: "racy", "closed (by #N)" or "clean (upstream as is)". */
    public static String label(Race race, Profile profile, Observed observed) {
        if (observed != Observed.BUG_FOUND && observed != Observed.CLEAN) {
            return observed.label();
        }
        java.util.Set<vllmrace.model.asyncio.YieldCondition> yields = race.needsYield();
        if (observed == Observed.BUG_FOUND) {
            List<String> when = yields.stream().filter(profile.configuration().yields()::contains)
                    .map(vllmrace.model.asyncio.YieldCondition::label).toList();
            return when.isEmpty() ? "racy" : "racy (" + String.join(", ", when) + ")";
        }
        if (race.closers().isEmpty()) {
            return "clean (upstream as is)";
        }
        List<String> merged = race.closedOnMainBy(profile).stream().map(f -> f.provenance().reference()).distinct().toList();
        if (merged.isEmpty() && !yields.isEmpty() && java.util.Collections.disjoint(yields, profile.configuration().yields())) {
            return CLEAN_NO_YIELD;
        }
        if (merged.isEmpty()) {
            return "closed";
        }
        boolean prs = merged.stream().allMatch(r -> r.startsWith("#"));
        return "closed (" + (prs ? "by " : "") + String.join(", ", merged) + ")";
    }

    /** The label of what a variant must show ({@link #label(Race, Variant, Observed)} of the expected observation). */
    public static String expectedLabel(Race race, Variant variant) {
        return variant == Variant.UPSTREAM_MAIN ? expectedLabel(race, Profile.MAIN) : expectedLabel(race, race.expected(variant), variant, null);
    }

    /** The label of what a deployment profile of vLLM main must show. */
    public static String expectedLabel(Race race, Profile profile) {
        Expectation expected = race.expected(profile);
        if (expected == Expectation.NOT_APPLICABLE) {
            return NOT_UNDER_SYNC;
        }
        return expectedLabel(race, expected, null, profile);
    }

    /** The vLLM-main label of a race whose window needs a yield the deployment never makes ({@link Race#needsYield()}). */
    public static final String CLEAN_NO_YIELD = "clean (no await in its window yields)";

    /** The vLLM-main label of a race the profile's scheduler class cannot reach. */
    public static final String NOT_UNDER_SYNC = "does not occur (AsyncScheduler only)";

    private static String expectedLabel(Race race, Expectation expected, Variant variant, Profile profile) {
        return switch (expected) {
            case BUG_FOUND -> profile == null ? label(race, variant, Observed.BUG_FOUND) : label(race, profile, Observed.BUG_FOUND);
            case CLEAN -> profile == null ? label(race, variant, Observed.CLEAN) : label(race, profile, Observed.CLEAN);
            case NOT_APPLICABLE -> expected.label();
        };
    }
}
