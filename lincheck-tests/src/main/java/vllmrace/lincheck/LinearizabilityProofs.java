package vllmrace.lincheck;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import vllmrace.lincheck.prove.Depth;
import vllmrace.lincheck.prove.ProofResult;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.FixSet;
import vllmrace.model.fix.Fix;
import vllmrace.races.Expectation;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Variant;

/**
 * The fix-switch matrix of linearizability: each check's bounded-exhaustive verdict under the fix sets that matter (every
 * fix; each deployment profile of vLLM main; each race's reported switches; each of its closers alone on top of them),
 * with what the race registry says each must be. {@code ./catalogue --prove} writes it; tests check a small bound of it.
 */
public final class LinearizabilityProofs {
    private LinearizabilityProofs() {
    }

    /** What a row's verdict must be. */
    public enum Expect {
        LINEARIZABLE("linearizable"), NOT_LINEARIZABLE("not linearizable"),
        /** Races stay open (a partial closer, or another race's closer turned off with these): either, on their invariants. */
        OPEN_MAY_FAIL("linearizable, or not on an open race");

        private final String label;

        Expect(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /**
     * One row: the check, the fix set's name and what it is, what it must give, and what it gave.
     *
     * @param allowed for a failing row, the races whose invariants it may break (empty: any, or none expected)
     */
    public record Row(LinearizabilityCheck check, String fixSet, String meaning, Expect expect, Set<Race> allowed, ProofResult result) {
        /** The races of the check whose declared detectors the counterexample names. */
        public Set<Race> attributed() {
            return result.failed() ? racesBreaking(check, result.counterexample().reason()) : Set.of();
        }

        /** Whether the verdict is the expected one, and a failure breaks an invariant of a race allowed to break it. */
        public boolean agrees() {
            boolean failed = result.failed();
            return switch (expect) {
                case LINEARIZABLE -> !failed;
                case NOT_LINEARIZABLE -> failed && attributedAllowed();
                case OPEN_MAY_FAIL -> !failed || attributedAllowed();
            };
        }

        private boolean attributedAllowed() {
            if (result.counterexample().reason().contains("modelling error")) {
                return false; // a harness error is never a race's verdict
            }
            Set<Race> attributed = attributed();
            return attributed.isEmpty() || allowed.isEmpty() || attributed.stream().anyMatch(allowed::contains);
        }
    }

    /** Every fix on, the check's own set-up. */
    public static Row everyFix(LinearizabilityCheck check, Depth depth) {
        return new Row(check, "every fix", "every fix on", Expect.LINEARIZABLE, Set.of(), check.proveFixed(depth));
    }

    /**
     * Every fix on at a larger bound. The frontend runs it under vLLM main's configuration (the awaits that really
     * suspend there): with every await suspending its interleavings grow past any bound that ends in minutes.
     */
    public static Row everyFixDeep(LinearizabilityCheck check, Depth depth) {
        Configuration conf = check == LinearizabilityCheck.FRONTEND ? Profile.MAIN.configuration() : null;
        return new Row(check, "every fix, " + depth, conf == null ? "every fix on" : "every fix on, with the awaits that suspend on vLLM main ("
                + conf + ")", Expect.LINEARIZABLE, Set.of(), check.prove("every fix, " + depth, FixSet.all(), conf, depth));
    }

    /** A deployment of vLLM main: not linearizable iff one of the check's races is racy there. */
    public static Row profile(LinearizabilityCheck check, Profile profile, Depth depth) {
        Set<Race> racy = racyOn(check, profile);
        return new Row(check, profile.label(), profile.deployment(), racy.isEmpty() ? Expect.LINEARIZABLE : Expect.NOT_LINEARIZABLE,
                racy, check.prove(profile.id(), profile.fixes(), profile.configuration(), depth));
    }

    /** The races of {@code check} that the race table says are racy on {@code profile}. */
    public static Set<Race> racyOn(LinearizabilityCheck check, Profile profile) {
        Set<Race> racy = new java.util.LinkedHashSet<>();
        for (Race race : check.races()) {
            if (race.expected(profile) == Expectation.BUG_FOUND) {
                racy.add(race);
            }
        }
        return racy;
    }

    /** A race's reported switches: not linearizable, on one of its own invariants. */
    public static Row reported(LinearizabilityCheck check, Race race, Depth depth) {
        return new Row(check, race + " reported", "its closers off: " + race.closers().all(), Expect.NOT_LINEARIZABLE, Set.of(race),
                check.proveReported(race, depth));
    }

    /**
     * One closer alone on top of a race's reported switches: linearizable, unless races stay open under that fix set (a
     * partial closer leaves its own race open; turning the race's other closers off may open another race they close; a
     * closer with a {@link LinearizabilityCheck#specificationDeviation} does not restore the specification): then it may
     * fail, on an open race's invariant or on a result.
     */
    public static Row closer(LinearizabilityCheck check, Race race, Fix closer, Depth depth) {
        FixSet fixes = race.fixesWithOnly(closer);
        Set<Race> open = openUnder(check, fixes, race.configuration());
        String deviation = check.specificationDeviation(closer);
        String meaning = closer + " alone (" + closer.provenance() + ")" + (deviation != null ? "; " + deviation : "")
                + (open.isEmpty() ? "" : "; open with it: " + open);
        return new Row(check, race + " + " + closer, meaning, open.isEmpty() ? Expect.LINEARIZABLE : Expect.OPEN_MAY_FAIL, open,
                check.prove(race + " + " + closer, fixes, race.configuration(), depth));
    }

    /**
     * The check's races still open under {@code fixes} and {@code configuration}: no full closer of theirs is on (and
     * kept by the deployment, and restoring this check's specification), their yield conditions can hold, and their
     * scheduler class runs.
     */
    public static Set<Race> openUnder(LinearizabilityCheck check, FixSet fixes, Configuration configuration) {
        Set<Race> open = new java.util.LinkedHashSet<>();
        for (Race race : check.races()) {
            if (race.closers().isEmpty() // a positive control: clean as upstream is
                    || !race.occursUnder(configuration.schedulerKind())
                    || !race.needsYield().isEmpty() && java.util.Collections.disjoint(race.needsYield(), configuration.yields())) {
                continue;
            }
            boolean closed = race.closers().full().stream()
                    .anyMatch(f -> fixes.isOn(f) && !configuration.takesAway(f) && check.specificationDeviation(f) == null);
            if (!closed) {
                open.add(race);
            }
        }
        return open;
    }

    /** Every row of {@code check}: every fix, each profile, each race reported and each of its closers alone. */
    public static List<Row> rows(LinearizabilityCheck check, Depth depth, Depth deep) {
        List<Row> rows = new ArrayList<>();
        rows.add(everyFix(check, depth));
        if (!deep.equals(depth)) {
            rows.add(everyFixDeep(check, deep));
        }
        for (Profile p : Profile.values()) {
            rows.add(profile(check, p, depth));
        }
        for (Race race : check.races()) {
            if (race.expected(Variant.REPORTED) != Expectation.BUG_FOUND) {
                continue;
            }
            rows.add(reported(check, race, depth));
            for (Fix fix : race.closers().all()) {
                rows.add(closer(check, race, fix, depth));
            }
        }
        return rows;
    }

    /**
     * The races of {@code check} whose declared detectors a failure's report names (by kind, or invariant code) on its
     * "invariant broken" line; none when no invariant broke.
     */
    static Set<Race> racesBreaking(LinearizabilityCheck check, String report) {
        Set<Race> races = new TreeSet<>();
        int broken = report.indexOf("invariant broken: ");
        if (broken < 0) {
            return races;
        }
        int end = report.indexOf('\n', broken);
        String line = report.substring(broken, end < 0 ? report.length() : end);
        for (Race race : check.races()) {
            for (RaceOutcome outcome : race.outcomes()) {
                outcome.declaredDetectors().forEach(kind -> {
                    if (line.contains(kind.name() + "[") || line.contains(kind.invariant() + ":")) {
                        races.add(race);
                    }
                });
            }
        }
        return races;
    }
}
