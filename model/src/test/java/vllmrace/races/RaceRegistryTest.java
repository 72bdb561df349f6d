package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.fix.Provenance;

/** The registry as the one declaration of each race: outcomes, stories, fix sets, lookup. */
class RaceRegistryTest {

    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void everyOutcomeIsCleanViolatingOrAModellingErrorWithItsMeaning(Race race) {
        for (RaceOutcome outcome : race.outcomes()) {
            assertFalse(outcome.meaning().isBlank(), race + " " + outcome); // throws unless exactly one annotation
        }
        assertTrue(race.modellingError().modellingError(), race + ": exactly one @ModellingError constant");
        assertTrue(Arrays.stream(race.outcomes()).anyMatch(RaceOutcome::violation), race + " has no violating outcome");
        assertTrue(Arrays.stream(race.outcomes()).anyMatch(o -> o.kind() == OutcomeKind.CLEAN), race + " has no clean outcome");
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void theStoryIsTheScenarioHeaderWithItsParts(Race race) {
        String story = Stories.of(race);
        assertTrue(story.startsWith(race.name() + ": "), race + "'s header must open with '" + race.name() + ": <summary>.'");
        assertFalse(Stories.summary(race).isBlank());
        for (String part : List.of("**Upstream.**", "**Set-up and actors.**", "**Invariant", "**Verdicts.**", "```")) {
            assertTrue(story.contains(part), race + "'s header lacks " + part + ":\n" + story);
        }
        String flat = story.replace('\n', ' ').replaceAll(" +", " ");
        String main = race.expected(Variant.UPSTREAM_MAIN) == Expectation.BUG_FOUND ? "vLLM main: racy" : "vLLM main: c";
        assertTrue(flat.contains(main) || (race.closedBy().isEmpty() && story.contains("vLLM main: clean")),
                race + "'s header must state the vLLM-main expectation the registry has (" + Labels.expectedLabel(race, Variant.UPSTREAM_MAIN) + ")");
        assertTrue(story.contains("**Scheduler.**"), race + "'s header must say under which scheduler class it occurs");
        String scheduler = flat.substring(flat.indexOf("**Scheduler.**"));
        boolean syncToo = race.occursUnder(vllmrace.model.sched.SchedulerKind.SCHEDULER);
        assertTrue(syncToo ? scheduler.contains("both scheduler classes") : scheduler.startsWith("**Scheduler.** AsyncScheduler only"),
                race + "'s Scheduler paragraph must agree with Race.occursUnder (" + (syncToo ? "both" : "AsyncScheduler only") + ")");
        if (race.component() == Component.FRONTEND) {
            assertTrue(story.contains("**Yields.**"), race + "'s header must say which upstream awaits open its window");
            String yields = flat.substring(flat.indexOf("**Yields.**"));
            assertTrue(race.needsYield().isEmpty() ? yields.contains("needs no yield")
                            : race.needsYield().stream().allMatch(c -> yields.contains(c.label())),
                    race + "'s Yields paragraph must name what Race.needsYield declares: " + race.needsYield());
        }
        for (Profile profile : Profile.values()) {
            if (race.expected(profile) != race.expected(Profile.MAIN)) {
                String says = profile.label() + ": " + switch (race.expected(profile)) {
                    case BUG_FOUND -> "racy";
                    case NOT_APPLICABLE -> "does not occur";
                    case CLEAN -> "c";
                };
                assertTrue(flat.contains(says), race + "'s header must say which deployments differ from vLLM main: '" + says
                        + "' (" + Labels.expectedLabel(race, profile) + ")");
            }
        }
    }

    /** Every merged fix names where its behaviour was read: a file version (path@commit, a release) or the PR's diff. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Fix.class)
    void everyMergedFixCitesAFileVersionOrItsDiff(Fix fix) {
        assertTrue(fix.provenance().citesSource(), fix + " is merged but cites no file version: " + fix.provenance());
        assertThrowsIllegal(() -> vllmrace.model.fix.ProvenanceProbe.mergedWithout());
    }

    @ParameterizedTest(name = "{0} [family]: every point builds, and reads every dimension it sets")
    @EnumSource(Race.class)
    void everyPointOfTheFamilyIsOneTheScenarioUnderstands(Race race) {
        assertEquals(Params.DEFAULT, race.grid().get(0));
        assertTrue(race.grid().size() > 1, race + " is a single point: give its scenario a family (tokens, n, requests, ...)");
        for (Params point : race.grid()) {
            RaceScenario scenario = race.scenario(FixSet.all(), point);
            assertFalse(scenario.actor1().isDone() || scenario.actor2().isDone(), race + " at " + point);
            assertEquals(java.util.Set.of(), point.unread(), race + " at " + point + ": dimensions its scenario never reads");
        }
    }

    @Test
    void aPartialCloserNamesWhatItLeavesAndTheReportedVariantSwitchesItOffToo() {
        Race race = Race.LateLoadCompletionUnion;
        assertEquals(java.util.Set.of(Fix.MULTI_CONNECTOR_LOAD_DEDUP, Fix.LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN), race.closers().full());
        assertEquals(java.util.Set.of("CN1"), race.closers().leaves(Fix.SCHEDULER_SKIP_LATE_REPORT));
        assertFalse(race.fixes(Variant.REPORTED).isOn(Fix.SCHEDULER_SKIP_LATE_REPORT));
        Verdict alone = InterleavingVerdicts.verdict(Subject.onlyCloser(race, Fix.SCHEDULER_SKIP_LATE_REPORT));
        assertTrue(alone.asExpected() && alone.figures().contains("break only [CN1]"), alone.headline());
        assertThrowsIllegal(() -> Closers.of(Fix.IS_FINISHED_GUARD).partly(Fix.IS_FINISHED_GUARD, "SC3"));
        assertThrowsIllegal(() -> Closers.none().partly(Fix.IS_FINISHED_GUARD));
        assertThrowsIllegal(() -> Subject.onlyCloser(race, Fix.ORDERED_ABORT));
    }

    private static void assertThrowsIllegal(Runnable r) {
        assertThrows(IllegalArgumentException.class, r::run);
    }

    @Test
    void upstreamMainIsExactlyTheMergedFixes() {
        FixSet main = FixSet.upstreamMain();
        for (Fix fix : Fix.values()) {
            assertEquals(fix.provenance().kind() == Provenance.Kind.MERGED, main.isOn(fix), fix.toString());
            assertFalse(fix.provenance().evidence().isBlank(), fix + " names no upstream evidence");
        }
        assertTrue(main.isOn(Fix.UNIQUE_INTERNAL_IDS) && !main.isOn(Fix.ORDERED_ABORT) && !main.isOn(Fix.NO_SAVE_WHILE_LOADING));
        assertEquals(FixSet.all(), FixSet.all().with(Fix.NO_SAVE_WHILE_LOADING), "all() includes proposals");
    }

    @Test
    void variantsDifferByTheRaceClosers() {
        for (Race race : Race.values()) {
            for (Fix fix : Fix.values()) {
                assertEquals(!race.closedBy().contains(fix), race.fixes(Variant.REPORTED).isOn(fix), race + " " + fix);
            }
            assertEquals(FixSet.all(), race.fixes(Variant.FIXED));
            assertEquals(FixSet.upstreamMain(), race.fixes(Variant.UPSTREAM_MAIN));
        }
    }

    @Test
    void vllmMainExpectationFollowsTheMergedClosers() {
        assertEquals(Expectation.BUG_FOUND, Race.RecvAndSendForAbortedLoad.expected(Variant.UPSTREAM_MAIN));
        assertEquals("racy", Labels.expectedLabel(Race.RecvAndSendForAbortedLoad, Variant.UPSTREAM_MAIN));
        assertEquals(Expectation.CLEAN, Race.DuplicateIdAbortWindow.expected(Variant.UPSTREAM_MAIN));
        assertEquals("closed (by #27987)", Labels.expectedLabel(Race.DuplicateIdAbortWindow, Variant.UPSTREAM_MAIN));
        assertEquals("clean (upstream as is)", Labels.expectedLabel(Race.ExtraAsyncSavesDedup, Variant.UPSTREAM_MAIN));
    }

    @Test
    void aScheduleIsDecodedFromItsStepLogAndRunsTheSameSteps() {
        Race race = Race.ConcurrentAbortKillsReadd;
        Schedule.Result first = Schedule.of("12222211").run(race.scenario(Variant.REPORTED), false);
        assertTrue(first.outcome().violation(), first.toString());
        Schedule decoded = Schedule.fromSteps(race.scenario(Variant.REPORTED), first.steps());
        assertEquals("12222211", decoded.actors());
        assertEquals(first.steps(), decoded.run(race.scenario(Variant.REPORTED), true).steps());
        assertThrows(IllegalArgumentException.class, () -> Schedule.of("1x2"));
        assertEquals(56, Schedule.all(race.scenario(Variant.REPORTED)).size(), "C(8,3) merges of 3 and 5 steps");
    }
}
