package vllmrace.races;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * The fix-switch matrix: each race's scenario under no fix, each fix alone, its own closers alone ({@code own}), the
 * merged fixes on each deployment profile ({@code main}, {@code main-ids-not-randomized}, ...) and every fix
 * ({@code all}), over every step interleaving. Computed in the run by the
 * tests and by the catalogue alike; the catalogue writes it to results/.
 */
public final class FixMatrix {
    private FixMatrix() {
    }

    /**
     * One cell: the schedules of the race's scenario under {@code fixes}. A schedule counts as violating when the
     * model's detectors recorded anything (counted per invariant, so a neighbour race the scenario's outcomes do not
     * name still shows), as a modelling error when an actor raised what upstream does not or the arbiter threw, or
     * when the scenario's arbiter found its expected end state missing with no detector finding.
     */
    public record Cell(Race race, String column, FixSet fixes, Map<String, Integer> byInvariant, int schedules,
                       int violating, int modellingErrors) {
        public Observed observed() {
            if (schedules == 0) {
                return Observed.NO_RESULTS;
            }
            return modellingErrors > 0 ? Observed.HARNESS_ERROR : violating > 0 ? Observed.BUG_FOUND : Observed.CLEAN;
        }

        public String figures() {
            if (schedules == 0) {
                return "not reachable: the scenario's set-up state does not exist with the " + FixMatrix.configuration(race, column)
                        .schedulerKind().upstreamClass() + " (one batch in flight)";
            }
            return violating + " of all " + schedules + " step interleavings violate"
                    + (byInvariant.isEmpty() ? "" : " " + byInvariant)
                    + (modellingErrors > 0 ? "; " + modellingErrors + " end in a modelling error" : "");
        }

        /** What the cell must show, or null where it is computed and shown but not asserted. */
        public Expectation expected() {
            return FixMatrix.expected(race, column);
        }
    }

    /** The columns: none, each fix alone, own, each deployment profile of vLLM main ({@code main}, ...), all. */
    public static List<String> columns() {
        List<String> columns = new ArrayList<>();
        columns.add("none");
        for (Fix fix : Fix.values()) {
            columns.add(fix.name());
        }
        columns.add("own");
        for (Profile profile : Profile.values()) {
            columns.add(profile.id());
        }
        columns.add("all");
        return columns;
    }

    /** The profile a column names, or null. */
    static Profile profile(String column) {
        return Profile.find(column);
    }

    public static FixSet fixes(Race race, String column) {
        Profile profile = profile(column);
        if (profile != null) {
            return profile.fixes();
        }
        return switch (column) {
            case "none" -> FixSet.none();
            case "own" -> FixSet.of(race.closedBy());
            case "all" -> race.fixes(Variant.FIXED);
            default -> FixSet.none().with(Fix.valueOf(column));
        };
    }

    /** A profile column's configuration; the race's own ({@link Race#configuration()}) for every other column. */
    public static Configuration configuration(Race race, String column) {
        Profile profile = profile(column);
        return profile == null ? race.configuration() : profile.configuration();
    }

    /**
     * What a cell must show: {@code all} clean, {@code main} the race's vLLM-main expectation. Other cells are computed
     * and shown, not asserted: a race may need another fix too (its scenario can hit a neighbour race), and a race such
     * as AbortedLoadLeak only exists once a first fix is ON.
     */
    public static Expectation expected(Race race, String column) {
        Profile profile = profile(column);
        if (profile != null) {
            Expectation expected = race.expected(profile);
            return expected == Expectation.NOT_APPLICABLE ? null : expected; // not reachable: computed and shown
        }
        return "all".equals(column) ? Expectation.CLEAN : null;
    }

    public static Cell cell(Race race, String column) {
        return cell(race, column, scenario -> { });
    }

    /** As {@link #cell(Race, String)}, each run's scenario first given to {@code tamper} (the harness self-tests break it). */
    static Cell cell(Race race, String column, java.util.function.Consumer<RaceScenario> tamper) {
        FixSet fixes = fixes(race, column);
        Configuration configuration = configuration(race, column);
        Params point = race.grid().get(0);
        Map<String, Integer> byInvariant = new TreeMap<>();
        int violating = 0;
        int errors = 0;
        List<Schedule> schedules;
        try {
            schedules = Schedule.all(race.scenario(fixes, configuration, point));
        } catch (IllegalStateException e) {
            if (e.getMessage() == null || !e.getMessage().startsWith("set-up: ") || race.occursUnder(configuration.schedulerKind())) {
                throw e;
            }
            return new Cell(race, column, fixes, Map.of(), 0, 0, 0); // the set-up's state cannot be reached
        }
        for (Schedule schedule : schedules) {
            RaceScenario scenario = race.scenario(fixes, configuration, point);
            tamper.accept(scenario);
            RaceOutcome outcome;
            try {
                outcome = schedule.run(scenario, false).outcome();
            } catch (RuntimeException e) {
                errors++;
                continue;
            }
            Set<String> broken = new TreeSet<>();
            scenario.violations().forEach(v -> broken.add(v.kind().invariant()));
            if (scenario.unexpectedActorFailure() != null || (broken.isEmpty() && outcome.modellingError())) {
                errors++;
            } else if (!broken.isEmpty()) {
                violating++;
                broken.forEach(invariant -> byInvariant.merge(invariant, 1, Integer::sum));
            }
        }
        return new Cell(race, column, fixes, byInvariant, schedules.size(), violating, errors);
    }

    /** The race's row, every column. */
    public static List<Cell> row(Race race) {
        return columns().stream().map(column -> cell(race, column)).toList();
    }
}
