package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import vllmrace.races.Shard;

/**
 * {@code ./catalogue --hunt --shard I/N}: each shard writes its own file and re-renders the summary from every shard of
 * the same hunt present; shards of another hunt are replaced, not mixed in; the summary says which shards it merged.
 */
class HuntShardMergeTest {
    private static HuntArgs args(Shard shard) {
        return new HuntArgs(20261201L, "none", 12, 60, -1, shard);
    }

    private static int run(Path results, HuntArgs args) {
        return new HuntCommand(args, results).run();
    }

    @Test
    void shardsMergeIntoOneSummaryAndRoundTrip(@TempDir Path tmp) throws Exception {
        Path results = Files.createDirectories(tmp.resolve("results"));
        Path dir = results.resolve("hunt/none");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("Hunt-SC4-old.md"), "a page of an older whole run");
        run(results, args(new Shard(2, 2)));
        assertFalse(Files.exists(dir.resolve("Hunt-SC4-old.md")), "the first shard file starts afresh: an older run's pages go");
        String half = Files.readString(dir.resolve("README.md"));
        assertTrue(half.contains("shards 2/2 (incomplete: shards 1/2 not run yet)"), half);
        run(results, args(new Shard(1, 2)));
        String both = Files.readString(dir.resolve("README.md"));
        assertTrue(both.contains("shards 1/2, 2/2 (every shard merged)"), both);
        HuntTally one = HuntTally.parse(Files.readAllLines(dir.resolve("shards/1-of-2.tsv")));
        HuntTally two = HuntTally.parse(Files.readAllLines(dir.resolve("shards/2-of-2.tsv")));
        assertEquals(12, one.scenarios() + two.scenarios(), "the shards ran the 12 programs between them");
        HuntTally merged = HuntTally.merge(List.of(one, two));
        assertTrue(merged.complete());
        assertTrue(both.contains(String.format(java.util.Locale.ROOT, "| scenarios explored | %,d |", merged.scenarios())), both);
        assertEquals(one, HuntTally.parse(one.toTsv().lines().toList()), "a shard file reads back as written");

        // a whole run replaces the shards
        run(results, args(Shard.ALL));
        assertFalse(Files.exists(dir.resolve("shards/1-of-2.tsv")));
        assertTrue(Files.exists(dir.resolve("shards/1-of-1.tsv")));
        assertEquals(12, HuntTally.parse(Files.readAllLines(dir.resolve("shards/1-of-1.tsv"))).scenarios());
    }

    @Test
    void aShardOfAnotherHuntReplacesTheFilesThere(@TempDir Path tmp) throws Exception {
        Path results = Files.createDirectories(tmp.resolve("results"));
        run(results, args(new Shard(1, 2)));
        run(results, new HuntArgs(7L, "none", 12, 60, -1, new Shard(2, 3)));
        Path shards = results.resolve("hunt/none/shards");
        try (var files = Files.list(shards)) {
            assertEquals(List.of("2-of-3.tsv"), files.map(p -> p.getFileName().toString()).toList());
        }
        assertTrue(Files.readString(results.resolve("hunt/none/README.md")).contains("incomplete: shards 1/3, 3/3 not run yet"));
    }

    @Test
    void mergeRefusesDifferentHuntsAndRepeatedShards() {
        HuntTally a = HuntTally.of(args(new Shard(1, 2)), 1, 6, 60, 100, 0, 0, java.util.Map.of(), java.util.Map.of(), java.util.Map.of(), java.util.Map.of());
        HuntTally b = HuntTally.of(new HuntArgs(9L, "none", 12, 60, -1, new Shard(2, 2)), 1, 6, 60, 100, 0, 0, java.util.Map.of(),
                java.util.Map.of(), java.util.Map.of(), java.util.Map.of());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> HuntTally.merge(List.of(a, b))).getMessage()
                .startsWith("shards of different hunts"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> HuntTally.merge(List.of(a, a))).getMessage()
                .contains("given twice"));
        assertThrows(IllegalArgumentException.class, () -> HuntTally.parse(List.of("hunt\tx", "shard\tnope")));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> HuntTally.parse(List.of("composition\tNoSuchRace>AbortedLoadLeak\t1\t2\t3")))
                .getMessage().contains("NoSuchRace"));
    }

    @Test
    void compositionsMergeByTheirChainAndRoundTrip() {
        List<List<vllmrace.races.Race>> steps = List.of(List.of(vllmrace.races.Race.AbortedLoadFreesBlocks),
                List.of(vllmrace.races.Race.IdleWithDelayFreedOnly, vllmrace.races.Race.DelayFreedNeverReleased));
        String chain = HuntTally.chainKey(steps);
        HuntTally a = HuntTally.of(args(new Shard(1, 2)), 1, 6, 60, 100, 3, 0, java.util.Map.of(),
                java.util.Map.of(chain, new HuntTally.Seen(2, 500, 4)), java.util.Map.of(),
                java.util.Map.of(5, new vllmrace.hunt.Hunt.Throughput(3, 30, 1_000_000, 12)));
        HuntTally b = HuntTally.of(args(new Shard(2, 2)), 1, 6, 60, 100, 3, 0, java.util.Map.of(),
                java.util.Map.of(chain, new HuntTally.Seen(1, 200, 9)), java.util.Map.of(),
                java.util.Map.of(5, new vllmrace.hunt.Hunt.Throughput(1, 10, 1_000_000, 4)));
        assertEquals(a, HuntTally.parse(a.toTsv().lines().toList()), "a composition line reads back as written");
        HuntTally merged = HuntTally.merge(List.of(a, b));
        assertEquals(new HuntTally.Seen(3, 200, 9), merged.compositions().get(chain), "counts add up, the earliest first sighting wins");
        assertEquals(steps, HuntTally.chain(chain));
        assertEquals(new vllmrace.hunt.Hunt.Throughput(4, 40, 2_000_000, 16), merged.bySize().get(5), "sizes add up across shards");
        assertEquals(20_000.0, merged.bySize().get(5).interleavingsPerThreadSecond(), 1e-6);
        assertEquals(2.5, merged.bySize().get(5).interleavingsPerEndState(), 1e-9, "40 interleavings over 16 end states");
    }
}
