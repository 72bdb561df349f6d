package vllmrace.races.connector;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.AllInterleavings;
import vllmrace.races.Params;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;

/**
 * The three ways upstream's NIXL worker has reported a transfer that runs over several handles, against the two races
 * that tell them apart: a pull whose first handle fails while a sibling still writes (SiblingHandleWritesAfterFailure)
 * and a push whose WRITEs all complete (PushSendNeverReported). Each direction is a fix set, every other fix ON; each
 * cell runs every step-level interleaving of the race's two actors ({@link AllInterleavings}) and counts the violating
 * ones. A modelling error in any interleaving fails the computation.
 */
public final class HandleReportDirections {

    /** A direction: how {@code get_finished} reports a transfer with several handles. */
    public enum Direction {
        /** Before #56104: a failure at the first ERR handle, a done push as soon as popped. */
        FIRST_ERROR("at the first ERR handle (before #56104)",
                FixSet.all().without(Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP).without(Fix.PUSH_SEND_REPORTED_PER_DIRECTION)),
        /** #56104 (vLLM main): once every handle stopped, done transfers filtered through the receive metadata. */
        THROUGH_RECV_METADATA("after every handle stopped, through the receive metadata (#56104; vLLM main)",
                FixSet.all().without(Fix.PUSH_SEND_REPORTED_PER_DIRECTION)),
        /** #56104 with #58188 (proposed): once every handle stopped, each direction judged by its own state. */
        PER_DIRECTION("after every handle stopped, each direction by its own state (#56104 + #58188, proposed)", FixSet.all());

        private final String label;
        private final FixSet fixes;

        Direction(String label, FixSet fixes) {
            this.label = label;
            this.fixes = fixes;
        }

        public String label() {
            return label;
        }

        public FixSet fixes() {
            return fixes;
        }
    }

    /** The races that tell the directions apart, in column order. */
    public static final List<Race> RACES = List.of(Race.SiblingHandleWritesAfterFailure, Race.PushSendNeverReported);

    /** One cell: under {@code direction}, {@code violating} of {@code interleavings} interleavings of {@code race} violate. */
    public record Cell(Direction direction, Race race, long violating, long interleavings) {
        public boolean clean() {
            return violating == 0;
        }
    }

    /**
     * Which cells are clean, per direction and race: reporting at the first error writes into freed blocks (the pull)
     * but loses no push; filtering through the receive metadata fixes the pull and loses every push; per direction both
     * are clean.
     */
    public static boolean expectedClean(Direction direction, Race race) {
        return switch (direction) {
            case FIRST_ERROR -> race != Race.SiblingHandleWritesAfterFailure;
            case THROUGH_RECV_METADATA -> race != Race.PushSendNeverReported;
            case PER_DIRECTION -> true;
        };
    }

    private HandleReportDirections() {
    }

    /** Every cell, directions in order, races in {@link #RACES} order within each. */
    public static List<Cell> compute() {
        List<Cell> cells = new ArrayList<>();
        for (Direction direction : Direction.values()) {
            for (Race race : RACES) {
                Map<RaceOutcome, Integer> outcomes = AllInterleavings.outcomes(() -> race.scenario(direction.fixes(), Configuration.DEFAULT, Params.DEFAULT));
                outcomes.keySet().stream().filter(RaceOutcome::modellingError).findFirst().ifPresent(o -> {
                    throw new IllegalStateException(race + " under " + direction + ": a modelling error, " + o);
                });
                long all = outcomes.values().stream().mapToLong(Integer::longValue).sum();
                long violating = outcomes.entrySet().stream().filter(e -> e.getKey().violation()).mapToLong(Map.Entry::getValue).sum();
                cells.add(new Cell(direction, race, violating, all));
            }
        }
        return cells;
    }

    /** Each cell whose cleanliness differs from {@link #expectedClean}, or that ran nothing; empty when all agree. */
    public static List<String> mismatches(List<Cell> cells) {
        List<String> mismatches = new ArrayList<>();
        if (cells.size() != Direction.values().length * RACES.size()) {
            return List.of(cells.size() + " cells, expected " + Direction.values().length * RACES.size());
        }
        for (Cell cell : cells) {
            if (cell.interleavings() <= 0) {
                mismatches.add(cell.race() + " under " + cell.direction() + ": nothing ran (vacuous)");
            } else if (cell.clean() != expectedClean(cell.direction(), cell.race())) {
                mismatches.add(cell.race() + " under " + cell.direction() + ": expected " + (cell.clean() ? "a violation" : "clean")
                        + ", " + cell.violating() + " of " + cell.interleavings() + " interleavings violate");
            }
        }
        return mismatches;
    }

    /** The markdown section: one row per direction, one column per race. */
    public static String toMarkdown(List<Cell> cells) {
        List<String> mismatches = mismatches(cells);
        StringBuilder md = new StringBuilder("## NIXL transfers over several handles: three report directions\n\n")
                .append("How the worker's `get_finished` reports a transfer with one handle per remote rank, against the two races ")
                .append("that tell the directions apart (`HandleReportDirections`, every other fix ON, the default deployment). Each cell runs ")
                .append("every step-level interleaving of the race's two actors; **NO** (k of n) = k of the n interleavings violate.\n\n")
                .append("**Against the expected table** (`HandleReportDirections.expectedClean`, also asserted by `HandleReportDirectionsTest`): ")
                .append(mismatches.isEmpty() ? "it matches." : "MISMATCH in " + mismatches.size() + " cell(s):").append('\n');
        mismatches.forEach(m -> md.append("- ").append(m).append('\n'));
        md.append("\n| direction |");
        RACES.forEach(r -> md.append(' ').append(r.name()).append(" |"));
        md.append("\n|---|").append("---|".repeat(RACES.size())).append('\n');
        for (Direction direction : Direction.values()) {
            md.append("| ").append(direction.label()).append(" |");
            cells.stream().filter(c -> c.direction() == direction).forEach(c -> md.append(' ')
                    .append(c.clean() ? "clean (" + c.interleavings() + ")" : "**NO** (" + c.violating() + " of " + c.interleavings() + ")")
                    .append(" |"));
            md.append('\n');
        }
        return md.toString();
    }
}
