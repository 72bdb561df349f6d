package vllmrace.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.races.Race;
import vllmrace.races.Shard;

/** ./catalogue's arguments: what each selects, and one line naming whatever is wrong. */
class CatalogueOptionsTest {

    private static String refused(String... args) {
        CatalogueOptions.UsageException e = assertThrows(CatalogueOptions.UsageException.class, () -> CatalogueOptions.parse(args));
        assertTrue(!e.getMessage().contains("\n"), "one line: " + e.getMessage());
        return e.getMessage();
    }

    @Test
    void noArgumentIsEveryRace() throws Exception {
        CatalogueOptions o = CatalogueOptions.parse();
        assertEquals(CatalogueOptions.Command.RUN, o.command());
        assertEquals(List.of(Race.values()), o.races());
        assertEquals(Shard.ALL, o.shard());
    }

    @Test
    void aReferenceNamingSeveralRacesSelectsThemAllAndSaysSo() throws Exception {
        CatalogueOptions o = CatalogueOptions.parse("#32255", "AbortLosesToFinalStep");
        assertEquals(List.of(Race.AbortLosesToFinalStep, Race.AbortedLoadFreesBlocks, Race.AbortedLoadLeak), o.races());
        assertEquals(List.of("'#32255' names 2 races: AbortedLoadFreesBlocks, AbortedLoadLeak"), o.notes());
    }

    @Test
    void aShardSelectsItsRaces() throws Exception {
        CatalogueOptions o = CatalogueOptions.parse("--shard", "2/4");
        assertEquals(new Shard(2, 4), o.shard());
        o.races().forEach(r -> assertEquals(1, r.ordinal() % 4, r.toString()));
        assertEquals(new Shard(3, 5), CatalogueOptions.parse("--shard=3/5").shard());
    }

    @Test
    void badInputIsOneLineNamingIt() {
        assertEquals("unknown option '--fo' (./catalogue --help lists them)", refused("--fo"));
        assertTrue(refused("AbortedLoadLek").startsWith("no race 'AbortedLoadLek'; closest: AbortedLoadLeak"));
        assertTrue(refused("--shard", "5/4").startsWith("--shard: a shard is I/N"));
        assertEquals("--shard needs a value (./catalogue --help)", refused("--shard"));
        assertTrue(refused("--hit-rates", "--runs", "0").startsWith("--runs: a number of runs from 1 to 100"));
        assertTrue(refused("--list", "--render").contains("cannot be combined"));
        assertTrue(refused("--shard", "1/13", "AbortedLoadLeak").contains("no race named here is in shard 1/13"));
    }

    @Test
    void flakeTakesAnOptionalCountAndTheRaceSelection() throws Exception {
        CatalogueOptions o = CatalogueOptions.parse("--flake");
        assertEquals(CatalogueOptions.Command.FLAKE, o.command());
        assertEquals(10, o.runs());
        assertEquals(List.of(Race.values()), o.races());
        CatalogueOptions some = CatalogueOptions.parse("--flake", "3", "AbortedLoadLeak");
        assertEquals(3, some.runs());
        assertEquals(List.of(Race.AbortedLoadLeak), some.races());
        assertEquals(List.of(Race.AbortedLoadLeak), CatalogueOptions.parse("AbortedLoadLeak", "--flake").races());
        assertEquals(5, CatalogueOptions.parse("--hit-rates").runs());
        assertEquals("--flake: a number of runs from 1 to 100, got '0'", refused("--flake", "0"));
        assertEquals("--flake: a number of runs from 1 to 100, got '-3'", refused("--flake", "-3"));
        assertEquals("--flake: a number of runs from 1 to 100, got '101'", refused("--flake", "101"));
        assertEquals("--runs belongs to --hit-rates and --bench (--flake takes its count as --flake N)", refused("--flake", "--runs", "3"));
        assertEquals("--runs belongs to --hit-rates and --bench (--flake takes its count as --flake N)", refused("--runs", "3"));
        assertEquals("'--flake' cannot be combined with --hit-rates", refused("--hit-rates", "--flake"));
    }

    @Test
    void mutationTakesNoRaceShardOrDeep() throws Exception {
        assertEquals(CatalogueOptions.Command.MUTATION, CatalogueOptions.parse("--mutation").command());
        String whole = "--mutation runs over the whole model: it takes no race, --shard or --deep";
        assertEquals(whole, refused("--mutation", "AbortedLoadLeak"));
        assertEquals(whole, refused("--mutation", "--shard", "1/2"));
        assertEquals(whole, refused("--deep", "--mutation"));
        assertEquals("'--mutation' cannot be combined with --list", refused("--list", "--mutation"));
    }

    @Test
    void driftTakesOnePath() throws Exception {
        CatalogueOptions o = CatalogueOptions.parse("--drift", "/src/vllm");
        assertEquals(CatalogueOptions.Command.DRIFT, o.command());
        assertEquals("/src/vllm", o.driftPath());
        assertEquals(null, o.pinnedPath());
        assertEquals("/pins", CatalogueOptions.parse("--drift", "/src/vllm", "--pinned", "/pins").pinnedPath());
        assertEquals("--pinned belongs to --drift (a directory of pinned upstream texts, <commit>/<file>)", refused("--pinned", "/pins"));
        assertEquals("--pinned needs a value (./catalogue --help)", refused("--drift", "/src/vllm", "--pinned"));
        assertEquals("--drift needs a value (./catalogue --help)", refused("--drift"));
        assertEquals("--drift takes one path, a vLLM checkout, and no race, --shard or --deep", refused("--drift", "/src/vllm", "AbortedLoadLeak"));
    }

    @Test
    void benchTakesRacesRunsAndTheLoopsBounds() throws Exception {
        CatalogueOptions o = CatalogueOptions.parse("--bench");
        assertEquals(CatalogueOptions.Command.BENCH, o.command());
        assertEquals(List.of(Race.values()), o.races());
        assertEquals(5, o.runs());
        assertEquals(CatalogueOptions.BenchArgs.DEFAULTS, o.bench());
        assertEquals(new CatalogueOptions.BenchArgs(10, 2), o.bench());
        CatalogueOptions some = CatalogueOptions.parse("--time", "3", "--bench", "AbortedLoadLeak", "--runs", "2", "--fixed-time", "1");
        assertEquals(List.of(Race.AbortedLoadLeak), some.races());
        assertEquals(2, some.runs());
        assertEquals(new CatalogueOptions.BenchArgs(3, 1), some.bench());
        assertEquals(HuntArgs.defaults(), some.hunt(), "--time with --bench is the loop's, not the hunt's");
        assertEquals(9, CatalogueOptions.parse("--hunt", "--time", "9").hunt().seconds());
        assertTrue(CatalogueOptions.HELP.contains("--bench"));
    }

    @Test
    void benchBadInputIsOneLine() {
        assertTrue(refused("--bench", "NoSuchRace").startsWith("no race 'NoSuchRace'; closest: "));
        assertEquals("--runs: a number of runs from 1 to 100, got '0'", refused("--bench", "--runs", "0"));
        assertEquals("--time: a number from 1 to 3600, got '0'", refused("--bench", "--time", "0"));
        assertEquals("--fixed-time: a number from 1 to 3600, got 'x'", refused("--bench", "--fixed-time", "x"));
        assertEquals("--fixed-time belongs to --bench", refused("--fixed-time", "3"));
        assertEquals("--seed, --fixes, --scenarios, --time and --scenario belong to --hunt", refused("--time", "3"));
        assertEquals("--bench takes races, --runs, --time and --fixed-time; no --shard or --deep", refused("--bench", "--deep"));
        assertTrue(refused("--bench", "--list").contains("cannot be combined"));
    }

    @Test
    void helpWinsOverEverythingElse() throws Exception {
        assertEquals(CatalogueOptions.Command.HELP, CatalogueOptions.parse("--list", "--help").command());
        assertTrue(CatalogueOptions.HELP.contains("Exit codes"));
    }

    @Test
    void huntTakesItsSeedFixesAndBounds() throws Exception {
        CatalogueOptions o = CatalogueOptions.parse("--hunt");
        assertEquals(CatalogueOptions.Command.HUNT, o.command());
        assertEquals(HuntArgs.defaults(), o.hunt());
        assertEquals(vllmrace.model.fix.FixSet.upstreamMain(), o.hunt().fixes());
        HuntArgs h = CatalogueOptions.parse("--hunt", "--seed", "7", "--fixes", "none", "--scenarios", "50", "--time", "9").hunt();
        assertEquals(new HuntArgs(7, "none", 50, 9, -1), h);
        assertEquals(vllmrace.model.fix.FixSet.none(), h.fixes());
        assertEquals(3, CatalogueOptions.parse("--hunt", "--scenario", "3").hunt().scenario());
        HuntArgs named = CatalogueOptions.parse("--hunt", "--fixes", "EAGER_ABORTS, DEFER_BLOCK_FREE").hunt();
        assertEquals("EAGER_ABORTS,DEFER_BLOCK_FREE", named.fixesName());
        assertEquals(vllmrace.model.fix.FixSet.none().with(vllmrace.model.fix.Fix.EAGER_ABORTS)
                .with(vllmrace.model.fix.Fix.DEFER_BLOCK_FREE), named.fixes());
    }

    @Test
    void huntBadInputIsOneLine() throws Exception {
        assertTrue(refused("--hunt", "--fixes", "NOPE").startsWith("--fixes: no fix 'NOPE'"));
        assertTrue(refused("--hunt", "--seed", "x").startsWith("--seed: a whole number"));
        assertTrue(refused("--hunt", "--scenarios", "0").startsWith("--scenarios: a number from 1"));
        assertTrue(refused("--hunt", "--time", "-3").startsWith("--time needs a value") || refused("--hunt", "--time", "-3").startsWith("--time:"));
        assertTrue(refused("--hunt", "--time", "abc").startsWith("--time: a number from 1"));
        assertTrue(refused("--hunt", "--scenario", "-1").startsWith("--scenario"));
        assertTrue(refused("--hunt", "--scenario", "x1").startsWith("--scenario: a scenario index"));
        assertEquals("--seed, --fixes, --scenarios, --time and --scenario belong to --hunt", refused("--seed", "3"));
        assertEquals("--hunt draws its own scenarios: it takes no race or --deep", refused("--hunt", "AbortedLoadLeak"));
        assertEquals("--scenario reproduces one program of the seed: it takes no --shard", refused("--hunt", "--scenario", "3", "--shard", "1/2"));
        assertTrue(refused("--hunt", "--shard", "3/2").startsWith("--shard: a shard is I/N"));
        assertEquals(new vllmrace.races.Shard(2, 4), CatalogueOptions.parse("--hunt", "--fixes", "none", "--shard", "2/4").hunt().shard());
        assertEquals(vllmrace.races.Shard.ALL, CatalogueOptions.parse("--hunt").hunt().shard());
        assertTrue(refused("--hunt", "--list").contains("cannot be combined"));
        assertEquals("--fixes needs a value (./catalogue --help)", refused("--hunt", "--fixes"));
    }

    @Test
    void proveTakesABoundOrEachChecksOwn() throws Exception {
        CatalogueOptions o = CatalogueOptions.parse("--prove");
        assertEquals(CatalogueOptions.Command.PROVE, o.command());
        assertEquals(null, o.bound());
        assertEquals(vllmrace.lincheck.prove.Depth.whole(3), CatalogueOptions.parse("--prove", "--bound", "whole:3").bound());
        assertEquals(vllmrace.lincheck.prove.Depth.SHAPE, CatalogueOptions.parse("--bound", "shape", "--prove").bound());
        assertEquals(vllmrace.lincheck.prove.Depth.mixed(1), CatalogueOptions.parse("--prove", "--bound", "MIXED:1").bound());
    }

    @Test
    void proveBadInputIsOneLine() {
        assertEquals("--bound: bound 'deep' is not one of: shape, mixed:N, whole:N", refused("--prove", "--bound", "deep"));
        assertTrue(refused("--prove", "--bound", "whole:9").startsWith("--bound: bound whole:9 is out of range"));
        assertTrue(refused("--prove", "--bound", "whole:x").startsWith("--bound: bound 'whole:x' is not one of"));
        assertEquals("--bound needs a value (./catalogue --help)", refused("--prove", "--bound"));
        assertEquals("--bound belongs to --prove", refused("--bound", "shape"));
        assertEquals("--prove runs every check under every fix set: it takes no race, --shard or --deep (only --bound)",
                refused("--prove", "AbortedLoadLeak"));
        assertTrue(refused("--prove", "--hunt").contains("cannot be combined"));
    }

    @Test
    void aProfileSelectsTheHuntsDeploymentAndTheListsColumn() throws Exception {
        HuntArgs h = CatalogueOptions.parse("--hunt", "--profile", "main-ids-not-randomized").hunt();
        assertEquals("main-ids-not-randomized", h.fixesName());
        assertEquals(vllmrace.model.fix.FixSet.upstreamMain(), h.fixes());
        assertEquals(vllmrace.model.deploy.Profile.MAIN_IDS_NOT_RANDOMIZED.configuration(), h.configuration());
        assertEquals("--profile main-ids-not-randomized", h.option());
        assertEquals(vllmrace.model.deploy.Configuration.DEFAULT.withYields(vllmrace.model.asyncio.YieldCondition.producedByVllmMain()),
                CatalogueOptions.parse("--hunt", "--fixes", "none").hunt().configuration(),
                "a bare fix set: upstream's defaults, under the yield conditions vLLM produces");
        assertEquals("--profile main", CatalogueOptions.parse("--hunt").hunt().option(), "the default hunt is the main profile");
        assertEquals(vllmrace.model.deploy.Profile.MAIN_OOT_LMCACHE, CatalogueOptions.parse("--list", "--profile", "main-oot-lmcache").profile());
    }

    @Test
    void aBadProfileIsOneLineNamingTheKnownProfiles() {
        assertEquals("--profile: no profile 'mian'; known profiles: main, main-ids-not-randomized, main-oot-lmcache, main-sync-scheduling",
                refused("--hunt", "--profile", "mian"));
        assertEquals("--profile: no profile 'x'; known profiles: main, main-ids-not-randomized, main-oot-lmcache, main-sync-scheduling",
                refused("--list", "--profile", "x"));
        assertTrue(refused("--profile", "main").startsWith("--profile belongs to --hunt and --list"));
        assertTrue(refused("--hunt", "--profile", "main", "--fixes", "none").startsWith("--profile and --fixes: give one"));
        assertEquals("--profile needs a value (./catalogue --help)", refused("--hunt", "--profile"));
    }
}
