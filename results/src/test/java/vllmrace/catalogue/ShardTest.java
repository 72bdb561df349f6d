package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import vllmrace.lincheck.LinearizabilityCheck;
import vllmrace.lincheck.connector.FixDirectionMatrix;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Race;
import vllmrace.races.Shard;

/**
 * The N shards of {@code -Dvllmrace.shard=I/N} are disjoint and together are the whole suite: every engine's verdict
 * cells, the fix-switch matrix rows, the linearizability cells and seed 003's fix-direction matrix, each in exactly one
 * shard, read from the very lists the tests and the catalogue select by.
 */
class ShardTest {

    /** Every cell of a shard, named. */
    private static List<String> cellsOf(Shard shard) {
        List<String> cells = new ArrayList<>();
        for (Engine engine : Engine.values()) {
            Cells.verdicts(engine, shard).forEach(s -> cells.add(engine + " " + s.label()));
        }
        Cells.races(shard).forEach(race -> cells.add("matrix " + race));
        LinearizabilityCheck.cells(shard).forEach(c -> cells.add("linearizability " + c));
        if (FixDirectionMatrix.inShard(shard)) {
            cells.add("seed 003 fix directions");
        }
        return cells;
    }

    @ParameterizedTest(name = "{0} shards [sharding]: disjoint, and together every cell")
    @ValueSource(ints = {1, 2, 3, 4, 5, 13, 20})
    void shardsAreDisjointAndCoverEveryCell(int n) {
        List<String> all = cellsOf(Shard.ALL);
        Set<String> seen = new HashSet<>();
        int total = 0;
        for (int i = 1; i <= n; i++) {
            for (String cell : cellsOf(new Shard(i, n))) {
                assertTrue(seen.add(cell), cell + " is in two of " + n + " shards");
                total++;
            }
        }
        assertEquals(new HashSet<>(all), seen, "the " + n + " shards together");
        assertEquals(all.size(), total);
        assertEquals(Race.values().length, all.stream().filter(c -> c.startsWith("matrix ")).count());
    }

    @Test
    void badShardTextIsRefusedWithItsForm() {
        for (String bad : List.of("0/4", "5/4", "2", "a/b", "1/0", "-1/3", "")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Shard.parse(bad));
            assertTrue(e.getMessage().contains("I/N"), e.getMessage());
        }
        assertEquals(new Shard(2, 4), Shard.parse(" 2/4 "));
    }
}
