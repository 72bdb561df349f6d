package vllmrace.races.connector;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiPredicate;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.AllInterleavings;
import vllmrace.races.Params;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;

/**
 * A cross table of fix directions against the races that tell them apart: each direction a fix set, each cell every
 * step-level interleaving of the race's two actors under it ({@link AllInterleavings}), counting the violating ones,
 * compared with the expected cleanliness. A modelling error in any interleaving fails the computation; a cell that ran
 * nothing is a mismatch (vacuous).
 */
public final class DirectionTable {

    /** One row: a way to fix the family, as a fix set. */
    public interface Direction {
        String name();

        String label();

        FixSet fixes();
    }

    /** One cell: under {@code direction}, {@code violating} of {@code interleavings} interleavings of {@code race} violate. */
    public record Cell(Direction direction, Race race, long violating, long interleavings) {
        public boolean clean() {
            return violating == 0;
        }
    }

    private final String title;
    private final String intro;
    private final String expectedBy;
    private final List<? extends Direction> directions;
    private final List<Race> races;
    private final Configuration configuration;
    private final BiPredicate<Direction, Race> expectedClean;

    /**
     * @param title         the section's heading
     * @param intro         what the rows are, before the common explanation of a cell
     * @param expectedBy    where the expected table is declared and asserted, for the page
     * @param configuration the deployment every cell runs in
     * @param expectedClean whether a cell is expected clean
     */
    public DirectionTable(String title, String intro, String expectedBy, List<? extends Direction> directions, List<Race> races,
                          Configuration configuration, BiPredicate<Direction, Race> expectedClean) {
        this.title = Objects.requireNonNull(title, "title");
        this.intro = Objects.requireNonNull(intro, "intro");
        this.expectedBy = Objects.requireNonNull(expectedBy, "expectedBy");
        this.directions = List.copyOf(directions);
        this.races = List.copyOf(races);
        this.configuration = Objects.requireNonNull(configuration, "configuration");
        this.expectedClean = Objects.requireNonNull(expectedClean, "expectedClean");
    }

    public List<Race> races() {
        return races;
    }

    public boolean expectedClean(Direction direction, Race race) {
        return expectedClean.test(direction, race);
    }

    /** Every cell, directions in order, races in order within each. */
    public List<Cell> compute() {
        List<Cell> cells = new ArrayList<>();
        for (Direction direction : directions) {
            for (Race race : races) {
                Map<RaceOutcome, Integer> outcomes = AllInterleavings.outcomes(() -> race.scenario(direction.fixes(), configuration, Params.DEFAULT));
                outcomes.keySet().stream().filter(RaceOutcome::modellingError).findFirst().ifPresent(o -> {
                    throw new IllegalStateException(race + " under " + direction.name() + ": a modelling error, " + o);
                });
                long all = outcomes.values().stream().mapToLong(Integer::longValue).sum();
                long violating = outcomes.entrySet().stream().filter(e -> e.getKey().violation()).mapToLong(Map.Entry::getValue).sum();
                cells.add(new Cell(direction, race, violating, all));
            }
        }
        return cells;
    }

    /** Each cell whose cleanliness differs from the expected, or that ran nothing, or a missing cell; empty when all agree. */
    public List<String> mismatches(List<Cell> cells) {
        if (cells.size() != directions.size() * races.size()) {
            return List.of(cells.size() + " cells, expected " + directions.size() * races.size());
        }
        List<String> mismatches = new ArrayList<>();
        for (Cell cell : cells) {
            if (cell.interleavings() <= 0) {
                mismatches.add(cell.race() + " under " + cell.direction().name() + ": nothing ran (vacuous)");
            } else if (cell.clean() != expectedClean(cell.direction(), cell.race())) {
                mismatches.add(cell.race() + " under " + cell.direction().name() + ": expected " + (cell.clean() ? "a violation" : "clean")
                        + ", " + cell.violating() + " of " + cell.interleavings() + " interleavings violate");
            }
        }
        return mismatches;
    }

    /** The markdown section: one row per direction, one column per race. */
    public String toMarkdown(List<Cell> cells) {
        List<String> mismatches = mismatches(cells);
        StringBuilder md = new StringBuilder("## ").append(title).append("\n\n").append(intro)
                .append(" Each cell runs every step-level interleaving of the race's two actors; **NO** (k of n) = k of the n ")
                .append("interleavings violate.\n\n**Against the expected table** (").append(expectedBy).append("): ")
                .append(mismatches.isEmpty() ? "it matches." : "MISMATCH in " + mismatches.size() + " cell(s):").append('\n');
        mismatches.forEach(m -> md.append("- ").append(m).append('\n'));
        md.append("\n| direction |");
        races.forEach(r -> md.append(' ').append(r.name()).append(" |"));
        md.append("\n|---|").append("---|".repeat(races.size())).append('\n');
        for (Direction direction : directions) {
            md.append("| ").append(direction.label()).append(" |");
            cells.stream().filter(c -> c.direction() == direction).forEach(c -> md.append(' ')
                    .append(c.clean() ? "clean (" + c.interleavings() + ")" : "**NO** (" + c.violating() + " of " + c.interleavings() + ")")
                    .append(" |"));
            md.append('\n');
        }
        return md.toString();
    }
}
