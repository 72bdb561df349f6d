package vllmrace.races;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.frontend.DuplicateIdAbortWindowScenario;

/**
 * The race registry: one entry per race of {@code reference/race-catalogue.md}, read by the JCStress
 * verdict tests, the Lincheck tests, the replays and the catalogue command. The constant's name is the
 * race identifier, used verbatim by its fix switch's javadoc, its tests, its results row and its traces.
 *
 * <p>"Reported" = every fix ON except the ones that close this race; "fixed" = every fix ON. So a race's
 * two variants differ by exactly its own switches, on top of today's upstream behaviour.
 */
public enum Race {
    DuplicateIdAbortWindow(
            Component.FRONTEND,
            "#15326 (seed 001)",
            "abort drops frontend state, then sends ABORT; a re-add of the same id slips its ADD in between: "
                    + "two live requests under one id in EngineCore",
            EnumSet.of(Fix.ORDERED_ABORT),
            Expectation.BUG_FOUND,
            DuplicateIdAbortWindowScenario.Outcome.class,
            fixes -> new DuplicateIdAbortWindowScenario(fixes));

    private final Component component;
    private final String upstream;
    private final String summary;
    private final Set<Fix> closedBy;
    private final Expectation reportedExpectation;
    private final Class<? extends RaceOutcome> outcomes;
    private final Function<FixSet, RaceScenario> scenario;

    <O extends Enum<O> & RaceOutcome> Race(Component component, String upstream, String summary, Set<Fix> closedBy,
                                         Expectation reportedExpectation, Class<O> outcomes,
                                         Function<FixSet, RaceScenario> scenario) {
        this.component = component;
        this.upstream = upstream;
        this.summary = summary;
        this.closedBy = Set.copyOf(closedBy);
        this.reportedExpectation = reportedExpectation;
        this.outcomes = outcomes;
        this.scenario = scenario;
    }

    public Component component() {
        return component;
    }

    /** The upstream PR / issue / seed. */
    public String upstream() {
        return upstream;
    }

    public String summary() {
        return summary;
    }

    /** The fix switches that close this race. */
    public Set<Fix> closedBy() {
        return closedBy;
    }

    /** The fixes ON in a variant. */
    public FixSet fixes(Variant variant) {
        FixSet fixes = FixSet.all();
        if (variant == Variant.REPORTED) {
            for (Fix fix : closedBy) {
                fixes = fixes.without(fix);
            }
        }
        return fixes;
    }

    public Expectation expected(Variant variant) {
        return variant == Variant.REPORTED ? reportedExpectation : Expectation.CLEAN;
    }

    /** A fresh scenario on a fresh model for a variant. */
    public RaceScenario scenario(Variant variant) {
        return scenario(fixes(variant));
    }

    /** A fresh scenario under any combination of fixes (the fix matrices use this). */
    public RaceScenario scenario(FixSet fixes) {
        return scenario.apply(Objects.requireNonNull(fixes, "fixes"));
    }

    /** The outcome a harness reported under its name (a JCStress state key). */
    public RaceOutcome outcome(String name) {
        for (RaceOutcome outcome : outcomes.getEnumConstants()) {
            if (((Enum<?>) outcome).name().equals(name)) {
                return outcome;
            }
        }
        throw new IllegalArgumentException(name() + " has no outcome named '" + name + "'");
    }

    public RaceOutcome[] outcomes() {
        return outcomes.getEnumConstants();
    }

    /** The JCStress test class of one variant: {@code vllmrace.stress.<component>.<Race>$<Variant>}. */
    public String jcstressTestName(Variant variant) {
        return "vllmrace.stress." + component.packageName() + "." + name() + "." + variant.className();
    }

    /** Looks a race up by identifier, or by an upstream reference such as {@code #15326}. */
    public static Race lookup(String idOrReference) {
        for (Race race : values()) {
            if (race.name().equals(idOrReference) || race.upstream.contains(idOrReference)) {
                return race;
            }
        }
        throw new IllegalArgumentException("no race '" + idOrReference + "'; known: " + java.util.Arrays.toString(values()));
    }
}
