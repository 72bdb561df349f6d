package vllmrace.catalogue;

import java.util.List;
import vllmrace.lincheck.LinearizabilityCheck;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Race;

/**
 * Elapsed time and an estimate of what is left, from the last run's timings in results/*.tsv (each verdict row keeps
 * its wall time): a race's enumerator and Lincheck rows, its linearizability rows, and the JCStress launch's time per
 * test. Where a race has no row yet, a flat guess.
 */
final class Progress {
    private static final long GUESS_RACE_MILLIS = 8_000;
    private static final long GUESS_CELL_MILLIS = 4_000;
    private static final long GUESS_JCSTRESS_TEST_MILLIS = 2_000;
    private static final long GUESS_JCSTRESS_LAUNCH_MILLIS = 5_000;
    private static final long GUESS_DIRECTIONS_MILLIS = 25_000;

    private final long start = System.nanoTime();
    private final List<Race> races;
    private final ResultsTables last;
    private long left;
    private long raceStart;
    private int racesDone;

    Progress(ResultsTables last, List<Race> races, List<LinearizabilityCheck.Cell> linearizability, boolean directions) {
        this.last = last;
        this.races = races;
        for (Race race : races) {
            left += raceEstimate(race);
        }
        for (LinearizabilityCheck.Cell cell : linearizability) {
            List<String> row = last.linearizability().get(cell.check().name(), cell.race() == null ? "all fixes" : cell.race().name() + " reported");
            left += row == null ? GUESS_CELL_MILLIS : Long.parseLong(row.get(5));
        }
        left += (directions ? GUESS_DIRECTIONS_MILLIS : 0) + jcstressEstimate();
    }

    private long raceEstimate(Race race) {
        long millis = 0;
        boolean any = false;
        for (Engine engine : List.of(Engine.ENUMERATOR, Engine.LINCHECK)) {
            for (var subject : Cells.subjects(engine, race)) {
                List<String> row = last.verdicts().get(race.name(), engine.label(), subject.variantLabel());
                if (row != null) {
                    millis += Long.parseLong(row.get(8));
                    any = true;
                }
            }
        }
        return any ? millis : GUESS_RACE_MILLIS;
    }

    /** The JCStress launch: the last launch's time per test, times this run's tests, plus the launch's own start-up. */
    long jcstressEstimate() {
        long tests = races.stream().mapToLong(r -> Cells.variants(Engine.JCSTRESS, r).size()).sum();
        long lastWall = 0;
        long lastTests = 0;
        for (List<String> row : last.verdicts().rows()) {
            if (row.get(1).equals(Engine.JCSTRESS.label())) {
                lastWall = Math.max(lastWall, Long.parseLong(row.get(8)));
                lastTests++;
            }
        }
        long perTest = lastTests == 0 ? GUESS_JCSTRESS_TEST_MILLIS
                : Math.max(1, (lastWall - GUESS_JCSTRESS_LAUNCH_MILLIS) / lastTests);
        return GUESS_JCSTRESS_LAUNCH_MILLIS + tests * perTest;
    }

    void startRace() {
        raceStart = System.nanoTime();
    }

    /** The race's closing line; the estimate drops by the race's planned share. */
    String endRace() {
        long took = millisSince(raceStart);
        left -= raceEstimate(races.get(racesDone++));
        return "done in " + seconds(took) + "; elapsed " + clock(elapsed()) + ", about " + clock(Math.max(0, left)) + " left";
    }

    /** A phase that ran outside a race (a linearizability cell): its time leaves the estimate. */
    void add(long millis) {
        left -= millis;
    }

    long estimateLeft() {
        return left;
    }

    long elapsed() {
        return millisSince(start);
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    static String seconds(long millis) {
        return String.format("%.1f s", millis / 1000.0);
    }

    /** {@code m:ss}. */
    static String clock(long millis) {
        long s = Math.round(millis / 1000.0);
        return String.format("%d:%02d", s / 60, s % 60);
    }
}
