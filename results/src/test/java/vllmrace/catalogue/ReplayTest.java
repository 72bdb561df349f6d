package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.lincheck.verdict.TraceStore;
import vllmrace.races.Expectation;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RaceScenario;
import vllmrace.races.Replay;
import vllmrace.races.Variant;

/**
 * Each race's saved counterexample (results/replays/RACE.md), performed on ONE thread in its order: on the
 * reported variant it must reproduce the race with exactly the saved steps; on the fixed variant the same
 * actor order must come out clean. Deterministic: no threads, no model checker.
 */
class ReplayTest {

    static Stream<Race> reproducibleRaces() {
        return Arrays.stream(Race.values()).filter(r -> r.expected(Variant.REPORTED) == Expectation.BUG_FOUND);
    }

    /** The replay's steps as the model logs them, and the actor schedule they imply. */
    record SavedReplay(List<String> steps, List<Replay.Move> moves) {
        static SavedReplay read(Race race) throws IOException {
            Path page = TraceStore.replayPath(race);
            assertTrue(Files.exists(page), page + " is missing: run ./catalogue " + race.name());
            RaceScenario scenario = race.scenario(race.fixes(Variant.REPORTED));
            String task1 = scenario.actor1().task() + ": ";
            String task2 = scenario.actor2().task() + ": ";
            List<String> steps = new ArrayList<>();
            List<Replay.Move> moves = new ArrayList<>();
            for (String line : Files.readAllLines(page)) {
                Matcher m = TraceStore.STEP_LINE.matcher(line);
                if (!m.matches()) {
                    continue;
                }
                steps.add(m.group(2));
                if (!m.group(1).equals("arbiter")) {
                    boolean first = m.group(1).equals("actor 1");
                    String task = first ? task1 : task2;
                    assertTrue(m.group(2).startsWith(task), page + ": '" + m.group(2) + "' is not a step of " + task);
                    // step names may contain ": " themselves, so strip the actor's task, not the first separator
                    moves.add(new Replay.Move(first ? 1 : 2, m.group(2).substring(task.length())));
                }
            }
            assertFalse(moves.isEmpty(), page + " has no actor step");
            return new SavedReplay(steps, moves);
        }
    }

    @ParameterizedTest(name = "{0} replay, reported variant reproduces the race")
    @MethodSource("reproducibleRaces")
    void replayOnReportedVariantReproducesTheRace(Race race) throws IOException {
        SavedReplay saved = SavedReplay.read(race);
        Replay.Result result = Replay.run(race, race.fixes(Variant.REPORTED), saved.moves(), true);
        assertTrue(result.outcome().violation(), "replay ended " + result.outcome());
        assertEquals(saved.steps(), result.steps(), "the model no longer runs the saved steps: re-run ./catalogue " + race.name());
    }

    @ParameterizedTest(name = "{0} replay, fixed variant stays clean")
    @MethodSource("reproducibleRaces")
    void sameActorOrderOnFixedVariantIsClean(Race race) throws IOException {
        SavedReplay saved = SavedReplay.read(race);
        RaceOutcome outcome = Replay.run(race, race.fixes(Variant.FIXED), saved.moves(), false).outcome();
        assertFalse(outcome.violation(), "fixed variant replay ended " + outcome);
    }
}
