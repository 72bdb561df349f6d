package vllmrace.catalogue;

import vllmrace.races.derive.JcstressNames;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/** A partial run replaces its own races' evidence and keeps every other race's: JCStress pages and table rows. */
class EvidenceMergeTest {

    @Test
    void aPartialRunKeepsTheOtherRacesJcstressPagesAndRows(@TempDir Path dir) throws IOException {
        Path kept = dir.resolve("results/jcstress-report");
        Files.createDirectories(kept);
        String other = JcstressNames.testName(Race.AbortedLoadLeak, Variant.REPORTED) + ".html";
        String mine = JcstressNames.testName(Race.AbortLosesToFinalStep, Variant.REPORTED) + ".html";
        Files.writeString(kept.resolve(other), "old page of another race");
        Files.writeString(kept.resolve(mine), "old page of the race re-run");
        Path launch = dir.resolve("launch");
        Files.createDirectories(launch);
        Files.writeString(launch.resolve(mine), "new page");
        Files.writeString(launch.resolve("index.html"), "JCStress's index of one launch");

        ResultsTables tables = ResultsTables.load(dir.resolve("results"));
        tables.verdicts().put(List.of("AbortedLoadLeak", "JCStress", "reported", "bug found", "bug found", "1", "1", "kept row", "1"));
        tables.verdicts().removeFirst("AbortLosesToFinalStep");
        JcstressReportPages.merge(launch, kept, List.of(Race.AbortLosesToFinalStep), tables.verdicts());

        assertEquals("old page of another race", Files.readString(kept.resolve(other)));
        assertEquals("new page", Files.readString(kept.resolve(mine)));
        String index = Files.readString(kept.resolve("index.html"));
        assertTrue(index.contains(other) && index.contains(mine), index);
        assertTrue(index.contains("kept row"), "the index reads the kept verdict row: " + index);
        assertFalse(index.contains("JCStress's index of one launch"));
        tables.write();
        assertEquals("kept row", ResultsTables.load(dir.resolve("results")).verdicts().get("AbortedLoadLeak", "JCStress", "reported").get(7));
    }
}
