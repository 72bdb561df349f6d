package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import vllmrace.evidence.ResultsDir;
import vllmrace.lincheck.verdict.TraceStore;
import vllmrace.races.Expectation;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/** No drift between the registry and the evidence: every race has its results row, trace and replay. */
class ResultsReadmeTest {

    @Test
    void everyRaceOfTheModelHasARowInResultsReadme() throws IOException {
        Path readme = ResultsDir.get().resolve("README.md");
        assertTrue(Files.exists(readme), "results/README.md is missing: run ./catalogue");
        String text = Files.readString(readme);
        for (Race race : Race.values()) {
            String row = text.lines().filter(l -> l.contains("</a>`" + race.name() + "` |")).findFirst().orElse(null);
            assertTrue(row != null, race + " has no row in results/README.md: run ./catalogue " + race.name());
            assertTrue(!row.contains("not run"), race + "'s row is incomplete: run ./catalogue " + race.name() + "\n" + row);
        }
    }

    @Test
    void topLevelReadmeListsExactlyTheRegistryRaces() throws IOException {
        Path readme = ResultsDir.get().getParent().resolve("README.md");
        String text = Files.readString(readme);
        assertTrue(text.contains(ReadmeRaceTable.render(ResultsTables.load(ResultsDir.get()).readme(ResultsDir.get()))),
                "README.md's race table differs from the registry: run ./catalogue (it rewrites the table)");
    }

    @Test
    void everyReproducedRaceHasATraceAndAReplay() {
        for (Race race : Race.values()) {
            if (race.expected(Variant.REPORTED) == Expectation.BUG_FOUND) {
                assertTrue(Files.exists(TraceStore.tracePath(race)), race + ": no trace under results/traces/");
                assertTrue(Files.exists(TraceStore.replayPath(race)), race + ": no replay under results/replays/");
            }
        }
    }
}
