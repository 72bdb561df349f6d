package vllmrace.races.connector;

import java.util.List;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;

/**
 * The three ways upstream's NIXL worker has reported a transfer that runs over several handles, against the two races
 * that tell them apart: a pull whose first handle fails while a sibling still writes (SiblingHandleWritesAfterFailure)
 * and a push whose WRITEs all complete (PushSendNeverReported). Each direction is a fix set, every other fix ON; each
 * cell runs every step-level interleaving of the race's two actors ({@link AllInterleavings}) and counts the violating
 * ones. A modelling error in any interleaving fails the computation.
 */
public final class HandleReportDirections {

    /** A direction: how {@code get_finished} reports a transfer with several handles. */
    public enum Direction implements DirectionTable.Direction {
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

        @Override
        public String label() {
            return label;
        }

        @Override
        public FixSet fixes() {
            return fixes;
        }
    }

    /** The races that tell the directions apart, in column order. */
    public static final List<Race> RACES = List.of(Race.SiblingHandleWritesAfterFailure, Race.PushSendNeverReported);

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

    /** The table. */
    public static final DirectionTable TABLE = new DirectionTable("NIXL transfers over several handles: three report directions",
            "How the worker's `get_finished` reports a transfer with one handle per remote rank, against the two races that tell "
                    + "the directions apart (`HandleReportDirections`, every other fix ON, the default deployment).",
            "`HandleReportDirections.expectedClean`, also asserted by `HandleReportDirectionsTest`",
            List.of(Direction.values()), RACES, vllmrace.model.deploy.Configuration.DEFAULT, (d, r) -> expectedClean((Direction) d, r));

    private HandleReportDirections() {
    }

    /** Every cell, directions in order, races in {@link #RACES} order within each. */
    public static List<DirectionTable.Cell> compute() {
        return TABLE.compute();
    }

    /** Each cell whose cleanliness differs from {@link #expectedClean}, or that ran nothing; empty when all agree. */
    public static List<String> mismatches(List<DirectionTable.Cell> cells) {
        return TABLE.mismatches(cells);
    }

    /** The markdown section: one row per direction, one column per race. */
    public static String toMarkdown(List<DirectionTable.Cell> cells) {
        return TABLE.toMarkdown(cells);
    }
}
