package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.lincheck.verdict.TraceStore;
import vllmrace.races.Cells;
import vllmrace.races.Expectation;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.ReplayPage;
import vllmrace.races.Schedule;
import vllmrace.races.Shard;
import vllmrace.races.Variant;

/**
 * Each race's saved counterexample (results/replays/RACE.md), performed on ONE thread in its order: on the
 * reported variant it must reproduce the race with exactly the saved steps; on the fixed variant the same
 * actor order must come out clean. Deterministic: no threads, no model checker.
 */
class ReplayTest {

    static Stream<Race> reproducibleRaces() {
        return Cells.races(Shard.current()).stream().filter(r -> r.expected(Variant.REPORTED) == Expectation.BUG_FOUND);
    }

    private static ReplayPage.Saved read(Race race) throws IOException {
        Path page = TraceStore.replayPath(race);
        assertTrue(Files.exists(page), page + " is missing: run ./catalogue " + race.name());
        return ReplayPage.read(race, Files.readAllLines(page));
    }

    @ParameterizedTest(name = "{0} [replay, reported]: reproduces the race", allowZeroInvocations = true)
    @MethodSource("reproducibleRaces")
    void replayOnReportedVariantReproducesTheRace(Race race) throws IOException {
        ReplayPage.Saved saved = read(race);
        Schedule.Result result = saved.schedule().run(race.scenario(Variant.REPORTED), true);
        assertTrue(result.outcome().violation(), "replay ended " + result.outcome());
        assertEquals(saved.steps(), result.steps(), "the model no longer runs the saved steps: re-run ./catalogue " + race.name());
    }

    @ParameterizedTest(name = "{0} [replay, fixed]: clean", allowZeroInvocations = true)
    @MethodSource("reproducibleRaces")
    void sameActorOrderOnFixedVariantIsClean(Race race) throws IOException {
        RaceOutcome outcome = read(race).schedule().run(race.scenario(Variant.FIXED), false).outcome();
        assertFalse(outcome.violation() || outcome.modellingError(), "fixed variant replay ended " + outcome);
    }
}
