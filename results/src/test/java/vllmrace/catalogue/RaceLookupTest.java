package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.races.Race;

/** The catalogue's race arguments: an identifier, or an upstream reference that may name several races. */
class RaceLookupTest {

    @Test
    void lookupTakesAnIdOrEveryRaceAReferenceNames() {
        assertEquals(List.of(Race.AbortedLoadLeak), RaceLookup.lookup("AbortedLoadLeak"));
        assertEquals(List.of(Race.AbortedLoadFreesBlocks, Race.AbortedLoadLeak), RaceLookup.lookup("#32255"));
        assertEquals(List.of(Race.LateLoadCompletionUnion, Race.PullIntoFreedBlocks), RaceLookup.lookup("seed 003"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RaceLookup.lookup("AbortedLoadLek"));
        assertTrue(e.getMessage().startsWith("no race 'AbortedLoadLek'; closest: AbortedLoadLeak"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RaceLookup.lookup(""));
    }
}
