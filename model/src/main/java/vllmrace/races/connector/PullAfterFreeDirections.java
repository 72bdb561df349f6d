package vllmrace.races.connector;

import java.util.List;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;

/**
 * Seed 003's three fix directions and a fourth, against the two ways a NIXL READ outlives the blocks it moves: on the
 * decode side, the READ of an aborted request lands in blocks the decode side already freed (PullIntoFreedBlocks, seed
 * 003's aggravating factor); on the prefill side, a late READ copies blocks the prefill side freed when their lease
 * expired (LeaseExpiredReadAfterFree: seed 003's pull into freed blocks with the prefill side freeing on a timer).
 *
 * <p>The fourth direction is "the prefill side fails the late read". A NIXL READ is one-sided: the prefill side takes no
 * part in it and cannot fail it once posted; the nearest form that upstream's design allows is the decode side declining
 * a READ at or after the expiry the prefill side advertises, the suite's {@link Fix#DECLINE_EXPIRED_REMOTE_READ}
 * (following #47021's turn-2 check). Each direction is that fix alone among the four, every other fix ON, in the
 * deployment seed 003 is about (LMCache's own MP connector as the LMCache child).
 */
public final class PullAfterFreeDirections {

    /** A direction: which of the four fixes is on. */
    public enum Direction implements DirectionTable.Direction {
        NONE("none of the four", List.of()),
        LOAD_DEDUP("(1) MultiConnector deduplicates the loads (MULTI_CONNECTOR_LOAD_DEDUP)", List.of(Fix.MULTI_CONNECTOR_LOAD_DEDUP)),
        PIN_PULL("(2) NIXL pins the pull's blocks on the decode side (NIXL_PIN_PULL_BLOCKS)", List.of(Fix.NIXL_PIN_PULL_BLOCKS)),
        SKIP_LATE("(3) the scheduler skips a late report (SCHEDULER_SKIP_LATE_REPORT)", List.of(Fix.SCHEDULER_SKIP_LATE_REPORT)),
        DECLINE_LATE("(4) the late READ fails: the decode side declines a READ past the prefill side's advertised lease "
                + "(DECLINE_EXPIRED_REMOTE_READ, the suite's proposal)", List.of(Fix.DECLINE_EXPIRED_REMOTE_READ)),
        ALL("all four", List.of(Fix.MULTI_CONNECTOR_LOAD_DEDUP, Fix.NIXL_PIN_PULL_BLOCKS, Fix.SCHEDULER_SKIP_LATE_REPORT,
                Fix.DECLINE_EXPIRED_REMOTE_READ));

        /** The four directions' fixes. */
        static final List<Fix> FOUR = ALL.on;

        private final String label;
        private final List<Fix> on;

        Direction(String label, List<Fix> on) {
            this.label = label;
            this.on = on;
        }

        @Override
        public String label() {
            return label;
        }

        @Override
        public FixSet fixes() {
            FixSet fixes = FixSet.all();
            for (Fix fix : FOUR) {
                if (!on.contains(fix)) {
                    fixes = fixes.without(fix);
                }
            }
            return fixes;
        }
    }

    /** The two reads or writes after a free, in column order. */
    public static final List<Race> RACES = List.of(Race.PullIntoFreedBlocks, Race.LeaseExpiredReadAfterFree);

    /**
     * Which cells are clean: the decode side's write after its own free is closed by (1) or (2), as seed 003's matrix
     * says; the prefill side's freed blocks are read unless the late READ is declined, (4); no one direction closes both.
     */
    public static boolean expectedClean(Direction direction, Race race) {
        boolean on1or2 = direction == Direction.LOAD_DEDUP || direction == Direction.PIN_PULL || direction == Direction.ALL;
        boolean on4 = direction == Direction.DECLINE_LATE || direction == Direction.ALL;
        return race == Race.PullIntoFreedBlocks ? on1or2 : on4;
    }

    /** The table. */
    public static final DirectionTable TABLE = new DirectionTable("A READ outlives its blocks: seed 003's directions and a fourth",
            "Seed 003's three directions and a fourth, \"the late READ fails\", each alone among the four (every other fix ON, "
                    + "the deployment with LMCache's own MP connector), against the decode side's pull into blocks it freed "
                    + "(PullIntoFreedBlocks) and the same pull with the prefill side freeing on a timer (LeaseExpiredReadAfterFree; "
                    + "`PullAfterFreeDirections`). A NIXL READ is one-sided: the prefill side cannot fail one in flight, so (4) is "
                    + "the decode side declining a READ at or after the expiry the prefill side advertises.",
            "`PullAfterFreeDirections.expectedClean`, also asserted by `PullAfterFreeDirectionsTest`",
            List.of(Direction.values()), RACES, Profile.MAIN_OOT_LMCACHE.configuration(), (d, r) -> expectedClean((Direction) d, r));

    private PullAfterFreeDirections() {
    }
}
