package vllmrace.hunt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import vllmrace.hunt.HuntOp.Kind;
import vllmrace.hunt.HuntRequest.Source;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;

/**
 * The race hunt, small enough for every build: with every fix off it must find catalogued races again, and with every
 * fix on it must find nothing outside the catalogue (a confirmed finding becomes a catalogued race, so this stays true);
 * what remains there is a proposal's own hazard, clean with that proposal off. The full hunt is {@code ./catalogue --hunt}.
 */
@DisplayName("race hunt")
class HuntTest {
    private static final long SEED = 20261201L;
    private static final int SCENARIOS = 80;

    private static Hunt.Report hunt(FixSet fixes, String name) {
        return new Hunt(new Hunt.Options(SEED, fixes, Configuration.DEFAULT, name, SCENARIOS, 60_000, 2)).run();
    }

    @Test
    void withEveryFixOffItRediscoversAtLeastThreeCatalogedRaces() {
        Hunt.Report r = hunt(FixSet.none(), "none");
        assertEquals(SCENARIOS, r.scenarios(), "the bound is the count, not the time");
        assertTrue(r.interleavings() > SCENARIOS, "every interleaving of each scenario: " + r.interleavings());
        assertTrue(r.rediscoveries().size() >= 3, "rediscovered: " + r.rediscoveries().keySet());
        assertEquals(0, r.modellingErrors(), "a generated program is never a modelling error");
        assertTrue(r.findings().isEmpty(), "every violation is a rediscovery or a composition: " + r.findings());
        assertEquals(SCENARIOS, r.bySize().values().stream().mapToInt(Hunt.Throughput::programs).sum(), "every program in its size");
        assertEquals(r.interleavings(), r.bySize().values().stream().mapToLong(Hunt.Throughput::interleavings).sum());
    }

    @Test
    void withEveryFixOnItFindsNothingButAProposalsOwnHazard() {
        Hunt.Report r = hunt(FixSet.all(), "all");
        assertEquals(SCENARIOS, r.scenarios());
        assertTrue(r.interleavings() > SCENARIOS);
        assertTrue(r.rediscoveries().isEmpty(), "every fix on closes every catalogued race: " + r.rediscoveries().keySet());
        assertEquals(0, r.modellingErrors());
        for (Hunt.Finding f : r.findings()) {
            assertFalse(f.outsideCatalogue(), "every fix on: " + f);
            assertFalse(f.hazardOf().provenance().merged(), f.hazardOf() + " is a proposal");
            assertTrue(Hunt.explore(f.minimal(), FixSet.all().without(f.hazardOf())).clean(), f.id() + " is clean with "
                    + f.hazardOf() + " off");
        }
    }

    /**
     * #46289's reclaim (RECLAIM_ABORTED_RECV, proposed) frees an aborted request's blocks after its grace period, but the
     * LMCache retrieve still writes them (nothing cancels it): with every fix on the program breaks SC4, and it is that
     * proposal's own hazard, clean with it off. With every fix off the same program is catalogued races.
     */
    @Test
    void aProposalsOwnCodePathIsItsHazardNotAFinding() {
        ConnectorProgram program = new ConnectorProgram(List.of(ConnectorProgram.Child.LMCACHE),
                List.of(new ConnectorProgram.Request("A", 1, 1, false, false, true)), 2, 1,
                List.of(ConnectorOp.of(ConnectorOp.Kind.ABORT, "A")),
                List.of(ConnectorOp.of(ConnectorOp.Kind.ITERATION), ConnectorOp.of(ConnectorOp.Kind.ITERATION),
                        ConnectorOp.of(ConnectorOp.Kind.ITERATION)));
        Hunt.Explored all = Hunt.explore(program, FixSet.all());
        assertEquals(java.util.Set.of("SC4"), all.invariants());
        Hunt everyFix = new Hunt(new Hunt.Options(SEED, FixSet.all(), Configuration.DEFAULT, "all", 1, 1, 1));
        Hunt.Classification label = everyFix.classify(program, all);
        assertEquals(Hunt.Classification.hazard(vllmrace.model.fix.Fix.RECLAIM_ABORTED_RECV), label);
        assertFalse(label.explained(), "a hazard is no catalogued race");
        assertTrue(label.races().isEmpty());
        Hunt none = new Hunt(new Hunt.Options(SEED, FixSet.none(), Configuration.DEFAULT, "none", 1, 1, 1));
        Hunt.Classification off = none.classify(program, Hunt.explore(program, FixSet.none()));
        assertTrue(off.explained() && off.races().contains(Race.SynthesizedSendForAbortedRetrieve), off.describe());
        assertThrows(IllegalArgumentException.class, () -> Hunt.Classification.hazard(vllmrace.model.fix.Fix.DELAY_FREE_ABORTED_LOAD),
                "a merged fix has no hazard of its own here: it is vLLM");
        assertThrows(IllegalArgumentException.class, () -> new Hunt.Classification(Hunt.Classification.Kind.HAZARD, List.of()));
    }

    /**
     * The connector world: a MultiConnector of one LMCache child, R cached, the client's abort against three busy-loop
     * iterations. On vLLM main the worker's made-up finished_sending beside the retrieve's finished_recving is
     * SynthesizedSendForAbortedRetrieve; its closer alone (LMCache #4939's proposal) leaves it clean.
     */
    @Test
    void aConnectorProgramRediscoversTheSynthesizedSendOnVllmMain() {
        ConnectorProgram program = new ConnectorProgram(List.of(ConnectorProgram.Child.LMCACHE),
                List.of(new ConnectorProgram.Request("A", 1, 1, false, false, true)), 2, 1,
                List.of(ConnectorOp.of(ConnectorOp.Kind.ABORT, "A")),
                List.of(ConnectorOp.of(ConnectorOp.Kind.ITERATION), ConnectorOp.of(ConnectorOp.Kind.ITERATION)));
        vllmrace.model.deploy.Profile main = vllmrace.model.deploy.Profile.MAIN;
        Hunt.Explored e = Hunt.explore(program, main.fixes(), main.configuration());
        assertTrue(e.violates() && e.invariants().contains("CN1"), e.invariants().toString());
        Hunt hunt = new Hunt(new Hunt.Options(SEED, main.fixes(), main.configuration(), "main", 1, 1, 1));
        assertEquals(Hunt.Classification.rediscovery(List.of(Race.SynthesizedSendForAbortedRetrieve)), hunt.classify(program, e));
        assertTrue(Hunt.explore(program, main.fixes().with(vllmrace.model.fix.Fix.LMCACHE_MP_ABORTED_RETRIEVE_NOT_STORED),
                main.configuration()).clean());
    }

    @Test
    void connectorProgramsAreDrawnShrinkAndRefuseBadInput() {
        List<Program> drawn = java.util.stream.IntStream.range(0, 400).mapToObj(i -> Hunt.program(SEED, i)).toList();
        long connector = drawn.stream().filter(p -> p instanceof ConnectorProgram).count();
        // one in FRONTEND_ONE_IN is frontend; of the rest one in CONNECTOR_ONE_IN_THE_REST: 100 of 400 expected
        assertTrue(connector > 60 && connector < 140, connector + " of 400 connector programs");
        for (Program p : drawn) {
            if (p instanceof ConnectorProgram c) {
                assertTrue(c.shrinkCandidates().stream().allMatch(x -> x.size() <= c.size() && !x.equals(c)), c.toString());
            }
        }
        var lm = List.of(ConnectorProgram.Child.LMCACHE);
        var a = List.of(new ConnectorProgram.Request("A", 1, 1, false, false, true));
        var abort = List.of(ConnectorOp.of(ConnectorOp.Kind.ABORT, "A"));
        var step = List.of(ConnectorOp.of(ConnectorOp.Kind.ITERATION));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram(lm,
                List.of(new ConnectorProgram.Request("A", 1, 1, true, false, false)), 2, 0, abort, step)).getMessage()
                .contains("NIXL decode child"), "a remote prefill without NIXL");
        assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL,
                ConnectorProgram.Child.NIXL), a, 2, 0, abort, step), "a child twice");
        assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram(lm, a, 2, 0, step, abort), "actors swapped");
        assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram(lm, a, 1, 0, abort, step), "a pool too small");
        assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram.Request("A", 1, 1, false, true, false),
                "a failing handshake without a remote prefill");
        assertThrows(IllegalArgumentException.class, () -> ConnectorOp.of(ConnectorOp.Kind.ABORT), "an abort of nothing");
    }

    /**
     * NIXL's other roles are in the connector world: the prefill side pulled from (its lease expires before the decode
     * side's READ), the prefill side pushing (a heartbeat renews the head lease and the reaper stops there), the decode side
     * pushed to (a rank's post fails), the bidirectional decode side (the turn-2 READ after its TTL). Each program is its
     * catalogued race where that race is open, and clean under the race's closer.
     */
    @Test
    void nixlsOtherRolesAreInTheConnectorWorld() {
        vllmrace.model.deploy.Profile main = vllmrace.model.deploy.Profile.MAIN;
        Hunt onMain = new Hunt(new Hunt.Options(SEED, main.fixes(), main.configuration(), "main", 1, 1, 1));
        Hunt none = new Hunt(new Hunt.Options(SEED, FixSet.none(), Configuration.DEFAULT, "none", 1, 1, 1));
        var two = List.of(new ConnectorProgram.Request("A", 1, 1, false, false, false),
                new ConnectorProgram.Request("B", 1, 1, false, false, false));
        var threeIterations = List.of(ConnectorOp.of(ConnectorOp.Kind.ITERATION), ConnectorOp.of(ConnectorOp.Kind.ITERATION),
                ConnectorOp.of(ConnectorOp.Kind.ITERATION));

        ConnectorProgram lateRead = new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL_PULL_PREFILL), two, 2, 2,
                List.of(ConnectorOp.of(ConnectorOp.Kind.REMOTE_READ, "A")), threeIterations);
        assertRediscovered(onMain, lateRead, main, Race.LeaseExpiredReadAfterFree, vllmrace.model.fix.Fix.DECLINE_EXPIRED_REMOTE_READ);

        ConnectorProgram turn2 = new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL_BIDIRECTIONAL), two, 2, 2,
                List.of(ConnectorOp.of(ConnectorOp.Kind.REMOTE_READ, "A")), threeIterations);
        Hunt.Explored offTurn2 = Hunt.explore(turn2, FixSet.none());
        assertEquals(Hunt.Classification.rediscovery(List.of(Race.BidirectionalTurn2ReadsExpired)), none.classify(turn2, offTurn2));
        assertTrue(Hunt.explore(turn2, main.fixes(), main.configuration()).clean(), "#47021 is merged: clean on vLLM main");

        ConnectorProgram postFails = new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL_PUSH_DECODE),
                List.of(new ConnectorProgram.Request("A", 1, 1, true, false, false)), 2, 1,
                List.of(ConnectorOp.of(ConnectorOp.Kind.PUSH_LANDS, "A"), ConnectorOp.of(ConnectorOp.Kind.PUSH_POST_FAILS, "A")),
                List.of(ConnectorOp.of(ConnectorOp.Kind.ITERATION)));
        assertRediscovered(onMain, postFails, main, Race.PushPostFailureDecodeWaits, vllmrace.model.fix.Fix.PUSH_FAILURE_NOTIFIED);

        ConnectorProgram pushed = new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL_PUSH_PREFILL),
                List.of(new ConnectorProgram.Request("A", 1, 1, false, false, false)), 2, 2,
                List.of(ConnectorOp.of(ConnectorOp.Kind.WRITES_POSTED, "A"), ConnectorOp.of(ConnectorOp.Kind.WRITE_COMPLETES, "A"),
                        ConnectorOp.of(ConnectorOp.Kind.WRITE_COMPLETES, "A")), List.of(ConnectorOp.of(ConnectorOp.Kind.ITERATION)));
        assertRediscovered(onMain, pushed, main, Race.PushSendNeverReported, vllmrace.model.fix.Fix.PUSH_SEND_REPORTED_PER_DIRECTION);

        ConnectorProgram renewed = new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL_PUSH_PREFILL), two, 4, 2,
                List.of(ConnectorOp.of(ConnectorOp.Kind.HEARTBEAT, "A")), threeIterations);
        assertRediscovered(onMain, renewed, main, Race.LeaseReaperHeadOfLine, vllmrace.model.fix.Fix.REAP_EVERY_EXPIRED_LEASE);

        var read = List.of(ConnectorOp.of(ConnectorOp.Kind.REMOTE_READ, "A"));
        var step = List.of(ConnectorOp.of(ConnectorOp.Kind.ITERATION));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL,
                ConnectorProgram.Child.NIXL_PULL_PREFILL), two, 2, 0, read, step)).getMessage().contains("NIXL in one role"));
        assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram(List.of(ConnectorProgram.Child.LMCACHE), two, 2, 0,
                read, step), "a remote READ with no side holding blocks for it");
        assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL_BIDIRECTIONAL),
                two, 2, 0, List.of(ConnectorOp.of(ConnectorOp.Kind.HEARTBEAT, "A")), step), "the bidirectional TTL takes no heartbeat");
        assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL_PUSH_DECODE,
                ConnectorProgram.Child.LMCACHE), List.of(new ConnectorProgram.Request("A", 1, 1, true, false, true)), 2, 0,
                List.of(ConnectorOp.of(ConnectorOp.Kind.ABORT, "A")), step), "a pushed prompt also cached");
        assertThrows(IllegalArgumentException.class, () -> new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL_PUSH_DECODE),
                List.of(new ConnectorProgram.Request("A", 1, 1, true, true, false)), 2, 0,
                List.of(ConnectorOp.of(ConnectorOp.Kind.ABORT, "A")), step), "a failing handshake is the pulling decode side's");
        assertTrue(java.util.stream.IntStream.range(0, 3000).mapToObj(i -> Hunt.program(SEED, i))
                .filter(p -> p instanceof ConnectorProgram).map(p -> (ConnectorProgram) p)
                .flatMap(c -> c.children().stream()).collect(java.util.stream.Collectors.toSet())
                .containsAll(List.of(ConnectorProgram.Child.values())), "every child kind is drawn");
    }

    /**
     * Found by the hunt on vLLM main, now catalogued: on a push decode side the client aborts A while it waits, a rank's
     * post fails, and the other rank's WRITE lands only after; A is held by #32255's delayed free for a report that never
     * comes. #46289's reclaim would free it but its own hazard (the late WRITE into the freed block) shows with it on, so
     * classification never switches it on: #50754's PUSH_FAIL alone removes the leak.
     */
    @Test
    void anAbortedPushWhosePostFailedIsCataloguedNotAFinding() {
        vllmrace.model.deploy.Profile main = vllmrace.model.deploy.Profile.MAIN;
        ConnectorProgram program = new ConnectorProgram(List.of(ConnectorProgram.Child.NIXL_PUSH_DECODE),
                List.of(new ConnectorProgram.Request("A", 1, 1, true, false, false)), 2, 1,
                List.of(ConnectorOp.of(ConnectorOp.Kind.ABORT, "A"), ConnectorOp.of(ConnectorOp.Kind.PUSH_POST_FAILS, "A")),
                List.of(ConnectorOp.of(ConnectorOp.Kind.ITERATION), ConnectorOp.of(ConnectorOp.Kind.ITERATION),
                        ConnectorOp.of(ConnectorOp.Kind.ITERATION)));
        Hunt.Explored e = Hunt.explore(program, main.fixes(), main.configuration());
        assertEquals(java.util.Set.of("LV2"), e.invariants());
        Hunt onMain = new Hunt(new Hunt.Options(SEED, main.fixes(), main.configuration(), "main", 1, 1, 1));
        assertEquals(Hunt.Classification.rediscovery(List.of(Race.PushPostFailureAbortedLeaks)), onMain.classify(program, e));
        assertEquals(java.util.Set.of("SC4"), Hunt.explore(program, FixSet.all()).invariants(), "the reclaim's own hazard");
        assertTrue(Hunt.explore(program, main.fixes().with(vllmrace.model.fix.Fix.PUSH_FAILURE_NOTIFIED), main.configuration()).clean());
    }

    /**
     * A lost remote load aborted after a resubmission, every fix off: AbortedLoadFreesBlocks, whose closers expose an idle
     * engine's leak and #46283's. PushPostFailureAbortedLeaks' closers hold DelayFreedNeverReleased's only one (#46289),
     * which made each of the two one the other could do without: the last step is found without the wider race.
     */
    @Test
    void aRaceWhoseClosersHoldAnothersDoesNotHideAComposition() {
        Program program = Hunt.program(SEED, 61410);
        Hunt.Explored e = Hunt.explore(program, FixSet.none());
        assertTrue(e.invariants().contains("SC4"), e.invariants().toString());
        Hunt none = new Hunt(new Hunt.Options(SEED, FixSet.none(), Configuration.DEFAULT, "none", 1, 1, 1));
        Hunt.Classification label = none.classify(program, e);
        assertEquals(Hunt.Classification.composition(List.of(List.of(Race.AbortedLoadFreesBlocks),
                List.of(Race.IdleWithDelayFreedOnly, Race.DelayFreedNeverReleased))), label, label.describe());
    }

    private static void assertRediscovered(Hunt hunt, ConnectorProgram program, vllmrace.model.deploy.Profile profile, Race race,
                                           vllmrace.model.fix.Fix closer) {
        Hunt.Explored e = Hunt.explore(program, profile.fixes(), profile.configuration());
        assertTrue(e.violates(), program + ": " + e.invariants());
        assertEquals(Hunt.Classification.rediscovery(List.of(race)), hunt.classify(program, e), program.toString());
        assertTrue(Hunt.explore(program, profile.fixes().with(closer), profile.configuration()).clean(), closer + " closes it");
    }

    /** Shards of one hunt take disjoint programs that together are the unsharded hunt's, with the same figures summed. */
    @Test
    void shardsAreDisjointAndTogetherTheWholeHunt() {
        int scenarios = 30;
        Hunt.Report whole = new Hunt(new Hunt.Options(SEED, FixSet.none(), Configuration.DEFAULT, "none", scenarios, 60_000, 1)).run();
        java.util.BitSet union = new java.util.BitSet();
        long interleavings = 0;
        int violating = 0;
        java.util.Map<Race, Integer> counts = new java.util.HashMap<>();
        for (int i = 1; i <= 3; i++) {
            vllmrace.races.Shard shard = new vllmrace.races.Shard(i, 3);
            Hunt.Report part = new Hunt(new Hunt.Options(SEED, FixSet.none(), Configuration.DEFAULT, "none", scenarios, 60_000, 1, shard)).run();
            assertFalse(union.intersects(part.explored()), "shard " + shard + " ran a program another shard ran: " + part.explored());
            int residue = i - 1;
            part.explored().stream().forEach(index -> assertEquals(residue, index % 3, "shard " + shard + " ran program " + index));
            assertEquals(part.explored().cardinality(), part.scenarios());
            union.or(part.explored());
            interleavings += part.interleavings();
            violating += part.violatingScenarios();
            part.rediscoveries().forEach((race, d) -> counts.merge(race, d.count(), Integer::sum));
        }
        assertEquals(whole.explored(), union, "the shards together ran exactly the unsharded hunt's programs");
        assertEquals(scenarios, union.cardinality());
        assertEquals(whole.interleavings(), interleavings);
        assertEquals(whole.violatingScenarios(), violating);
        java.util.Map<Race, Integer> wholeCounts = new java.util.HashMap<>();
        whole.rediscoveries().forEach((race, d) -> wholeCounts.put(race, d.count()));
        assertEquals(wholeCounts, counts);
        assertFalse(counts.isEmpty(), "with every fix off some race is found again in 30 programs");
    }

    @Test
    void aProgramIsReproducedFromItsSeedAndIndex() {
        assertEquals(Hunt.program(SEED, 17), Hunt.program(SEED, 17));
        assertNotEquals(Hunt.program(SEED, 17), Hunt.program(SEED, 18));
        assertNotEquals(Hunt.program(SEED, 17), Hunt.program(SEED + 1, 17));
    }

    /** DelayFreedNeverReleased's shape: a remote prefill that never pushes, and the client's abort. */
    private static HuntProgram lostPushThenAbort() {
        return new HuntProgram(List.of(new HuntRequest("A", 1, 0, 1, 0, Source.REMOTE, SavePolicy.NEVER)), 2, 1,
                List.of(HuntOp.of(Kind.LOSE_LOAD, "A"), HuntOp.of(Kind.ABORT, "A")),
                List.of(HuntOp.of(Kind.ITERATION), HuntOp.of(Kind.ITERATION)));
    }

    @Test
    void aViolationIsClassifiedByTheCatalogedRaceWhoseClosersItNeeds() {
        Hunt hunt = new Hunt(new Hunt.Options(SEED, FixSet.upstreamMain(), Configuration.DEFAULT, "main", 1, 1, 1));
        Hunt.Explored e = Hunt.explore(lostPushThenAbort(), FixSet.upstreamMain());
        assertTrue(e.violates());
        assertTrue(e.invariants().contains("LV2"), e.invariants().toString());
        assertEquals(Hunt.Classification.rediscovery(List.of(Race.DelayFreedNeverReleased)), hunt.classify(lostPushThenAbort(), e));
        assertFalse(Hunt.explore(lostPushThenAbort(), FixSet.all()).violates());
    }

    @Test
    void shrinkingKeepsTheClassificationAndMakesTheProgramSmaller() {
        HuntProgram big = new HuntProgram(List.of(new HuntRequest("A", 1, 0, 1, 0, Source.REMOTE, SavePolicy.NEVER),
                new HuntRequest("B", 1, 0, 2, 0, Source.LOCAL, SavePolicy.NEVER)), 3, 2,
                List.of(HuntOp.of(Kind.LOSE_LOAD, "A"), HuntOp.of(Kind.TRANSFERS_COMPLETE), HuntOp.of(Kind.ABORT, "A")),
                List.of(HuntOp.of(Kind.ITERATION), HuntOp.of(Kind.ITERATION), HuntOp.of(Kind.TRANSFERS_COMPLETE)));
        Hunt hunt = new Hunt(new Hunt.Options(SEED, FixSet.upstreamMain(), Configuration.DEFAULT, "main", 1, 1, 1));
        Hunt.Classification label = hunt.classify(big, Hunt.explore(big, FixSet.upstreamMain()));
        assertEquals(Hunt.Classification.rediscovery(List.of(Race.DelayFreedNeverReleased)), label);
        Program small = hunt.shrink(big, label);
        assertTrue(small.size() < big.size(), small.toString());
        assertEquals(1, ((HuntProgram) small).requests().size(), small.toString());
        assertEquals(label, hunt.classify(small, Hunt.explore(small, FixSet.upstreamMain())));
    }

    /**
     * A remote-prefill request A loading, the client resubmitting A (refused: without #27987 the frontend still tracks it)
     * and aborting it twice; with every fix off the abort frees A's blocks while its load writes them (SC4). AbortedLoadFreesBlocks's closer alone does not remove it: it exposes AbortOfFinishedDelayFreed's
     * double free, whose closers leave the aborted load's blocks held with the engine idle (IdleWithDelayFreedOnly), whose
     * closer leaves it clean. A composition, named in that order; #27987's unique ids alone remove it too (they change what
     * the resubmit does), which a finding's page would say.
     */
    @Test
    void aCompositionNamesItsRacesInTheOrderEachFixExposesTheNext() {
        HuntProgram program = new HuntProgram(List.of(new HuntRequest("A", 1, 1, 1, 0, Source.REMOTE, SavePolicy.NEVER)), 1, 1,
                List.of(HuntOp.of(Kind.READD, "A"), HuntOp.of(Kind.ABORT, "A"), HuntOp.of(Kind.ABORT, "A")),
                List.of(HuntOp.of(Kind.ITERATION)));
        Hunt hunt = new Hunt(new Hunt.Options(20261201L, FixSet.none(), Configuration.DEFAULT, "none", 1, 1, 1));
        Hunt.Explored e = Hunt.explore(program, FixSet.none());
        assertEquals(java.util.Set.of("SC4"), e.invariants());
        List<Race> chain = List.of(Race.AbortedLoadFreesBlocks, Race.AbortOfFinishedDelayFreed, Race.IdleWithDelayFreedOnly);
        Hunt.Classification label = hunt.classify(program, e);
        assertEquals(new Hunt.Classification(Hunt.Classification.Kind.COMPOSITION, chain.stream().map(List::of).toList()), label);
        assertTrue(label.describe().startsWith("a composition of catalogued races: AbortedLoadFreesBlocks, whose closers expose "
                + "AbortOfFinishedDelayFreed"), label.describe());
        FixSet fixes = FixSet.none();
        Hunt.Explored current = e;
        for (Race race : chain) {
            assertTrue(current.violates(), race + " has something left to explain");
            for (vllmrace.model.fix.Fix fix : race.closers().full()) {
                fixes = fixes.with(fix);
            }
            Hunt.Explored after = Hunt.explore(program, fixes);
            assertTrue(!after.invariants().equals(current.invariants()) || after.violating() < current.violating(),
                    race + "'s closers change what breaks: " + current.invariants() + " -> " + after.invariants());
            current = after;
        }
        assertFalse(current.violates(), "the chain's closers together leave it clean");
        var single = Hunt.singleFixesRemoving(program, FixSet.none(), Configuration.DEFAULT);
        assertEquals(java.util.Set.of(vllmrace.model.fix.Fix.UNIQUE_INTERNAL_IDS), single.keySet());
        assertThrows(IllegalArgumentException.class, () -> Hunt.singleFixesRemoving(program, FixSet.all(), Configuration.DEFAULT),
                "a program clean under the fixes has nothing to remove");
    }

    @Test
    void aClassificationNamesRacesExactlyWhenItExplains() {
        assertThrows(IllegalArgumentException.class, () -> new Hunt.Classification(Hunt.Classification.Kind.FINDING,
                List.of(List.of(Race.AbortedLoadLeak))));
        assertThrows(IllegalArgumentException.class, () -> new Hunt.Classification(Hunt.Classification.Kind.COMPOSITION,
                List.of(List.of(Race.AbortedLoadLeak))));
        assertThrows(IllegalArgumentException.class, () -> new Hunt.Classification(Hunt.Classification.Kind.COMPOSITION,
                List.of(List.of(Race.AbortedLoadLeak), List.of())));
        assertFalse(Hunt.Classification.FINDING.explained());
        assertEquals(Hunt.Classification.Kind.REDISCOVERY, Hunt.Classification.composition(List.of(List.of(Race.AbortedLoadLeak))).kind(),
                "a chain of one step is a rediscovery");
    }

    /**
     * A race the hunt's fixes already close is never the explanation: under every fix but #27987's unique ids, a client
     * aborting A and resubmitting it breaks FE1, and only races #27987 closes are credited, never one whose closers are on.
     */
    @Test
    void aRaceTheHuntsFixesCloseIsNeverCredited() {
        HuntProgram program = new HuntProgram(List.of(new HuntRequest("A", 1, 0, 3, 0, Source.LOCAL, SavePolicy.ALWAYS)), 2, 0,
                List.of(HuntOp.of(Kind.ABORT, "A"), HuntOp.of(Kind.READD, "A")), List.of(HuntOp.of(Kind.ITERATION)));
        FixSet fixes = FixSet.all().without(vllmrace.model.fix.Fix.UNIQUE_INTERNAL_IDS);
        Hunt.Explored e = Hunt.explore(program, fixes);
        assertTrue(e.violates(), e.invariants().toString());
        Hunt hunt = new Hunt(new Hunt.Options(20261201L, fixes, Configuration.DEFAULT, "all but UNIQUE_INTERNAL_IDS", 1, 1, 1));
        Hunt.Classification label = hunt.classify(program, e);
        assertTrue(label.explained(), "a catalogued race explains it");
        for (Race race : label.races()) {
            assertTrue(race.closedBy().contains(vllmrace.model.fix.Fix.UNIQUE_INTERNAL_IDS), race + " is closed by the hunt's own fixes");
        }
    }

    @Test
    void badInputIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Hunt.Options(1, FixSet.all(), Configuration.DEFAULT, "all", 0, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Hunt.Options(1, FixSet.all(), Configuration.DEFAULT, "all", 1, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> Hunt.program(1, -1));
        HuntRequest a = new HuntRequest("A", 1, 0, 1, 0, Source.REMOTE, SavePolicy.NEVER);
        assertThrows(IllegalArgumentException.class, () -> new HuntProgram(List.of(a), 2, 0,
                List.of(HuntOp.of(Kind.LOSE_LOAD, "A")), List.of(HuntOp.of(Kind.ITERATION))), "a lost push without its abort");
        assertThrows(IllegalArgumentException.class, () -> new HuntProgram(List.of(a), 2, 0,
                List.of(HuntOp.of(Kind.ABORT, "B")), List.of(HuntOp.of(Kind.ITERATION))), "an operation on no request");
        assertThrows(IllegalArgumentException.class, () -> new HuntProgram(List.of(a), 2, 0,
                List.of(HuntOp.of(Kind.ABORT, "A")), List.of(HuntOp.of(Kind.ABORT, "A"))), "the busy loop does not abort");
        assertThrows(IllegalArgumentException.class, () -> new HuntProgram(List.of(new HuntRequest("A", 2, 0, 3, 0, Source.LOCAL,
                SavePolicy.NEVER)), 2, 0, List.of(HuntOp.of(Kind.ABORT, "A")), List.of(HuntOp.of(Kind.ITERATION))), "too small a pool");
        assertThrows(IllegalArgumentException.class, () -> new HuntRequest("A", 0, 0, 1, 0, Source.LOCAL, SavePolicy.NEVER));
        assertThrows(IllegalArgumentException.class, () -> HuntOp.of(Kind.ITERATION, "A"));
        assertThrows(IllegalArgumentException.class, () -> HuntOp.of(Kind.ABORT));
        HuntRequest remote = new HuntRequest("A", 1, 0, 1, 0, Source.REMOTE, SavePolicy.NEVER);
        List<HuntOp> abort = List.of(HuntOp.of(Kind.ABORT, "A"));
        List<HuntOp> iterate = List.of(HuntOp.of(Kind.ITERATION));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new HuntProgram(List.of(remote), 2, 0, abort, iterate, 4,
                HuntProgram.Role.CONSUMER)).getMessage().contains("2 to 3 steps"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new HuntProgram(List.of(remote), 2, 0, abort, iterate, 2,
                HuntProgram.Role.PRODUCER)).getMessage().contains("prefill side loads nothing"));
    }

    /**
     * PreemptedInFinalStepEmptyBlocks's shape in the hunt's world: a prefill-side connector (kv_producer), a pool holding C,
     * A and R, all three running, R in its final step, and A's decode needs a block. With every fix
     * off R is preempted and still finishes, handing the producer no blocks (CN3); #50297's closer, switched on with #48245
     * it is built on, removes it: a rediscovery.
     */
    @Test
    void aProducerConnectorRediscoversAPreemptionInTheFinalStep() {
        HuntProgram program = preemptedInFinalStep(HuntProgram.Role.PRODUCER);
        Hunt hunt = new Hunt(new Hunt.Options(SEED, FixSet.none(), Configuration.DEFAULT, "none", 1, 1, 1));
        Hunt.Explored e = Hunt.explore(program, FixSet.none());
        assertTrue(e.invariants().contains("CN3"), e.invariants().toString());
        assertEquals(Hunt.Classification.rediscovery(List.of(Race.PreemptedInFinalStepEmptyBlocks)), hunt.classify(program, e));
        assertFalse(Hunt.explore(preemptedInFinalStep(HuntProgram.Role.CONSUMER), FixSet.none()).invariants().contains("CN3"),
                "a decode-side connector requires no KV delivery: nothing to hand off");
    }

    /**
     * StoreReadsPreemptedBlocks's shape: a pool of 2, A decoding into a second block, R's store job emitted at its first
     * schedule; the store thread reads R's block after A's growth preempted R and took it. With every fix off the job
     * reads A's KV under R's key; #52372's block reference per store job removes it: a rediscovery.
     */
    @Test
    void aStoreJobReadAfterAPreemptionIsRediscovered() {
        HuntProgram program = new HuntProgram(List.of(new HuntRequest("A", 1, 0, 3, 0, Source.LOCAL, SavePolicy.NEVER),
                new HuntRequest("R", 1, 0, 1, 0, Source.LOCAL, SavePolicy.NEVER, true)), 2, 1, List.of(HuntOp.of(Kind.STORE_READ, "R")),
                List.of(HuntOp.of(Kind.ITERATION), HuntOp.of(Kind.ITERATION), HuntOp.of(Kind.ITERATION)));
        Hunt hunt = new Hunt(new Hunt.Options(SEED, FixSet.none(), Configuration.DEFAULT, "none", 1, 1, 1));
        Hunt.Explored e = Hunt.explore(program, FixSet.none());
        assertTrue(e.violates(), e.toString());
        assertEquals(0, e.modellingErrors(), "the store thread keeps up while the engine drains");
        Hunt.Classification label = hunt.classify(program, e);
        assertTrue(label.races().contains(Race.StoreReadsPreemptedBlocks), label.describe());
        assertTrue(Hunt.explore(program, FixSet.all()).clean());
        assertThrows(IllegalArgumentException.class, () -> new HuntRequest("R", 1, 0, 1, 0, Source.REMOTE, SavePolicy.NEVER, true),
                "a store job stores KV computed here");
    }

    private static HuntProgram preemptedInFinalStep(HuntProgram.Role role) {
        SavePolicy save = role.policy();
        return new HuntProgram(List.of(new HuntRequest("C", 1, 1, 1, 0, Source.LOCAL, save), new HuntRequest("A", 1, 0, 2, 0, Source.LOCAL, save),
                new HuntRequest("R", 1, 0, 1, 0, Source.LOCAL, save)), 3, 1, List.of(HuntOp.of(Kind.TRANSFERS_COMPLETE)),
                List.of(HuntOp.of(Kind.ITERATION)), HuntProgram.MIN_BATCH_QUEUE, role);
    }

    /**
     * What the hunt can express is computed, not listed: with every fix off DoubleAbortApplication shows only in a
     * composition (its window is #29987's aborts queue, the closer of AbortLosesToFinalStep), the preemption races alone;
     * with every fix on nothing can; under the sync scheduler an AsyncScheduler-only race cannot.
     */
    @Test
    void aRaceIsExpressibleWhereItsOwnScenarioShowsItUnderTheHuntsFixes() {
        Hunt noFix = new Hunt(new Hunt.Options(SEED, FixSet.none(), Configuration.DEFAULT, "none", 1, 1, 1));
        List<Race> none = noFix.expressible();
        assertTrue(noFix.expressibleOnlyInAComposition().contains(Race.DoubleAbortApplication), "its window needs #29987 on");
        assertFalse(noFix.expressibleOnlyInAComposition().contains(Race.AbortedLoadFreesBlocks));
        assertTrue(none.containsAll(List.of(Race.PreemptedInFinalStepEmptyBlocks, Race.PlaceholderUnderflowOnPreempt,
                Race.AbortedLoadFreesBlocks)), none.toString());
        assertTrue(Hunt.inWorld().containsAll(none));
        assertTrue(none.contains(Race.StoreReadsPreemptedBlocks), "store jobs are in the world");
        assertTrue(new Hunt(new Hunt.Options(SEED, FixSet.all(), Configuration.DEFAULT, "all", 1, 1, 1)).expressible().isEmpty());
        FixSet open = FixSet.all().without(vllmrace.model.fix.Fix.REQUIRES_KV_DELIVERY);
        assertTrue(new Hunt(new Hunt.Options(SEED, open, Configuration.DEFAULT, "x", 1, 1, 1)).expressible()
                .contains(Race.PreemptedInFinalStepEmptyBlocks));
        Configuration sync = vllmrace.model.deploy.Profile.MAIN_SYNC_SCHEDULING.configuration();
        assertFalse(new Hunt(new Hunt.Options(SEED, open, sync, "x", 1, 1, 1)).expressible().contains(Race.PreemptedInFinalStepEmptyBlocks),
                "AsyncScheduler only");
    }

    /**
     * #49674's livelock: with #45357's deferred frees and #50297 on but not #49675, two requests in a short pool preempt each
     * other forever; the engine never settles, every interleaving is a modelling error, and that is not a fix set that
     * removed a violation (clean() is false). #49675's fenced-victim stop settles it.
     */
    @Test
    void anEngineThatNeverSettlesHasNotRemovedAViolation() {
        HuntProgram program = new HuntProgram(List.of(new HuntRequest("A", 1, 0, 1, 0, Source.LOCAL, SavePolicy.ALWAYS),
                new HuntRequest("B", 2, 0, 2, 1, Source.LOCAL, SavePolicy.NEVER), new HuntRequest("C", 1, 0, 3, 0, Source.PENDING_CHUNK,
                        SavePolicy.ALWAYS)), 3, 1, List.of(HuntOp.of(Kind.READD, "C")), List.of(HuntOp.of(Kind.TRANSFERS_COMPLETE),
                HuntOp.of(Kind.ITERATION), HuntOp.of(Kind.ITERATION)), HuntProgram.MIN_BATCH_QUEUE, HuntProgram.Role.BOTH);
        FixSet livelock = FixSet.none().with(vllmrace.model.fix.Fix.REQUIRES_KV_DELIVERY).with(vllmrace.model.fix.Fix.STALE_OUTPUT_AFTER_PREEMPT)
                .with(vllmrace.model.fix.Fix.DEFER_BLOCK_FREE);
        Hunt.Explored e = Hunt.explore(program, livelock);
        assertFalse(e.violates());
        assertEquals(e.schedules(), e.modellingErrors(), "every interleaving: the engine never settles");
        assertFalse(e.clean());
        assertTrue(Hunt.explore(program, livelock.with(vllmrace.model.fix.Fix.STOP_PREEMPTION_AT_FENCED_VICTIM)).clean());
    }

    /**
     * With {@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1} vLLM main runs #27987 but not its code path: the client aborts A
     * and resubmits it, and the ABORT, applied after the second ADD, finishes the new A (FE2). Every fix is on, so only the
     * configuration can reopen it: the hunt drops the switch with the closer and credits a race #27987 closes
     * (DelayFreedIdReuse: the aborted A is still held when its id comes back), where before it called every such violation
     * a finding. Under the default configuration the program is clean.
     */
    @Test
    void aRaceTheConfigurationReopensIsARediscovery() {
        HuntProgram program = new HuntProgram(List.of(new HuntRequest("A", 2, 0, 3, 0, Source.REMOTE, SavePolicy.NEVER)), 3, 0,
                List.of(HuntOp.of(Kind.ABORT, "A"), HuntOp.of(Kind.READD, "A")), List.of(HuntOp.of(Kind.ITERATION)));
        vllmrace.model.deploy.Profile ids = vllmrace.model.deploy.Profile.MAIN_IDS_NOT_RANDOMIZED;
        Hunt.Explored e = Hunt.explore(program, ids.fixes(), ids.configuration());
        assertTrue(e.invariants().contains("FE2"), e.invariants().toString());
        Hunt hunt = new Hunt(new Hunt.Options(SEED, ids.fixes(), ids.configuration(), ids.id(), 1, 1, 1));
        Hunt.Classification label = hunt.classify(program, e);
        assertEquals(Hunt.Classification.Kind.REDISCOVERY, label.kind(), label.describe());
        assertTrue(label.races().stream().allMatch(r -> r.closedBy().contains(vllmrace.model.fix.Fix.UNIQUE_INTERNAL_IDS)), label.describe());
        vllmrace.model.deploy.Profile main = vllmrace.model.deploy.Profile.MAIN;
        assertTrue(Hunt.explore(program, main.fixes(), main.configuration()).clean());
    }

    /**
     * A duplicate ADD under a reused id (ids not randomized) leaves a request scheduled that {@code requests} no longer
     * holds: {@code _update_after_schedule} raises KeyError (#42157) and EngineCore dies there. The model's drain past the
     * death never settles; that is not a modelling error (upstream runs no such iteration), and no liveness is judged.
     */
    @Test
    void aDeadEngineEndsTheDrainWithoutAModellingError() {
        HuntProgram program = new HuntProgram(List.of(new HuntRequest("A", 1, 1, 2, 1, Source.LOCAL, SavePolicy.NEVER),
                new HuntRequest("B", 1, 0, 2, 0, Source.PENDING_CHUNK, SavePolicy.ALWAYS)), 2, 1,
                List.of(HuntOp.of(Kind.TRANSFERS_COMPLETE), HuntOp.of(Kind.READD, "A"), HuntOp.of(Kind.READD, "A")),
                List.of(HuntOp.of(Kind.ITERATION), HuntOp.of(Kind.ITERATION)), HuntProgram.MIN_BATCH_QUEUE, HuntProgram.Role.PRODUCER);
        vllmrace.model.deploy.Profile ids = vllmrace.model.deploy.Profile.MAIN_IDS_NOT_RANDOMIZED;
        Hunt.Explored e = Hunt.explore(program, ids.fixes(), ids.configuration());
        assertEquals(0, e.modellingErrors(), e.toString());
        assertTrue(e.invariants().contains("engine"), e.invariants().toString());
        assertTrue(e.invariants().stream().noneMatch(i -> i.startsWith("LV")), "no liveness is judged past EngineCore's death: " + e.invariants());
    }

    /**
     * The frontend world: X with two parallel samples of one token each; the client aborts X by its external id while
     * EngineCore finishes both children and the output handler runs. On vLLM main (#51629 open) some interleaving leaves
     * X's parent in parent_requests (FE4): a rediscovery of ParentRequestLeakOnAbort; with every fix on, clean.
     */
    @Test
    void aFrontendProgramRediscoversTheParentLeakOnVllmMain() {
        FrontendProgram program = new FrontendProgram(2, 1, 0, 0, List.of(FrontendOp.ABORT),
                List.of(FrontendOp.ENGINE_STEP, FrontendOp.OUTPUT_HANDLER));
        vllmrace.model.deploy.Profile main = vllmrace.model.deploy.Profile.MAIN;
        Hunt.Explored e = Hunt.explore(program, main.fixes(), main.configuration());
        assertEquals(java.util.Set.of("FE4"), e.invariants());
        assertEquals(0, e.modellingErrors());
        Hunt hunt = new Hunt(new Hunt.Options(SEED, main.fixes(), main.configuration(), main.id(), 1, 1, 1));
        assertEquals(Hunt.Classification.rediscovery(List.of(Race.ParentRequestLeakOnAbort)), hunt.classify(program, e));
        assertTrue(Hunt.explore(program, FixSet.all(), main.configuration()).clean());
    }

    /**
     * X stops at its first token; the client re-adds X while the output handler, under an output batch over 128 outputs,
     * yields between dropping X@1 and sending its ABORT. With every fix off the ABORT finishes X@2 (FE1, FE2, FE3). Both
     * StopStringLateAbort and DuplicateIdAbortWindow are closed by #27987; only the first is also closed by its other
     * closer, so the hunt credits it. Without the load's yield there is no window; a re-add the frontend refuses (X still
     * tracked) ends the client and is no modelling error.
     */
    @Test
    void aStopStringsLateAbortIsCreditedToTheRaceWhoseEveryCloserRemovesIt() {
        FrontendProgram program = new FrontendProgram(1, 3, 1, 0, List.of(FrontendOp.READD),
                List.of(FrontendOp.ENGINE_STEP, FrontendOp.OUTPUT_HANDLER));
        Configuration load = Configuration.DEFAULT.withYields(vllmrace.model.asyncio.YieldCondition.producedByVllmMain());
        Hunt.Explored e = Hunt.explore(program, FixSet.none(), load);
        assertTrue(e.invariants().containsAll(List.of("FE1", "FE2", "FE3")), e.invariants().toString());
        assertEquals(0, e.modellingErrors(), "the refused re-adds are upstream's ValueError, not the model's");
        Hunt hunt = new Hunt(new Hunt.Options(SEED, FixSet.none(), load, "none", 1, 1, 1));
        assertEquals(Hunt.Classification.rediscovery(List.of(Race.StopStringLateAbort)), hunt.classify(program, e));
        assertTrue(Hunt.explore(program, FixSet.none(), Configuration.DEFAULT).clean(), "no yield, no window");
    }

    @Test
    void programsOfBothWorldsAreDrawnAndFrontendProgramsRefuseBadInput() {
        List<Program> drawn = java.util.stream.IntStream.range(0, 200).mapToObj(i -> Hunt.program(SEED, i)).toList();
        long frontend = drawn.stream().filter(p -> p instanceof FrontendProgram).count();
        assertTrue(frontend > 20 && frontend < 100, frontend + " of 200 frontend programs, one in " + Hunt.FRONTEND_ONE_IN + " expected");
        List<FrontendOp> abort = List.of(FrontendOp.ABORT);
        List<FrontendOp> step = List.of(FrontendOp.ENGINE_STEP);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new FrontendProgram(3, 1, 0, 0, abort, step)).getMessage()
                .contains("n 1..2"));
        assertThrows(IllegalArgumentException.class, () -> new FrontendProgram(1, 2, 3, 0, abort, step), "a stop past max_tokens");
        assertThrows(IllegalArgumentException.class, () -> new FrontendProgram(1, 1, 0, 0, step, abort), "actors swapped");
        assertThrows(IllegalArgumentException.class, () -> new FrontendProgram(1, 1, 0, 0, List.of(), step), "an idle client");
        FrontendProgram big = new FrontendProgram(2, 3, 2, 2, List.of(FrontendOp.READD, FrontendOp.CANCEL), List.of(FrontendOp.OUTPUT_HANDLER,
                FrontendOp.ENGINE_STEP));
        assertTrue(big.shrinkCandidates().stream().allMatch(p -> p.size() < big.size()));
    }

    /**
     * n = 2, a stop string at the second token, the client aborting X and re-adding it while EngineCore steps twice: with
     * every fix off no single race's closers remove everything it breaks, and every fix on but #27987 brings it back. Five
     * catalogued races have #27987 among their closers; only those whose closers are #27987 alone are credited
     * (DelayFreedIdReuse and ConcurrentAbortKillsReadd, which fixes cannot tell apart), not those with more.
     */
    @Test
    void aRaceNeededOnlyThroughAnotherRacesCloserIsNotCredited() {
        FrontendProgram program = new FrontendProgram(2, 3, 2, 0, List.of(FrontendOp.ABORT, FrontendOp.READD),
                List.of(FrontendOp.ENGINE_STEP, FrontendOp.ENGINE_STEP, FrontendOp.OUTPUT_HANDLER));
        Configuration load = Configuration.DEFAULT.withYields(vllmrace.model.asyncio.YieldCondition.producedByVllmMain());
        Hunt hunt = new Hunt(new Hunt.Options(SEED, FixSet.none(), load, "none", 1, 1, 1));
        Hunt.Classification label = hunt.classify(program, Hunt.explore(program, FixSet.none(), load));
        assertEquals(Hunt.Classification.rediscovery(List.of(Race.DelayFreedIdReuse, Race.ConcurrentAbortKillsReadd)), label);
    }

    /**
     * The bound on partial-order reduction is counted, not assumed: a program's interleavings end in at least one and at
     * most as many distinct end states as there are interleavings, and the lost push's two aborts (whichever order the
     * busy loop meets them in) end the same way more than once.
     */
    @Test
    void everyProgramCountsItsDistinctEndStates() {
        Hunt.Explored e = Hunt.explore(lostPushThenAbort(), FixSet.upstreamMain());
        assertTrue(e.distinctEnds() >= 1 && e.distinctEnds() <= e.schedules(), e.distinctEnds() + " of " + e.schedules());
        assertTrue(e.distinctEnds() < e.schedules(), "some interleavings of this program end alike: " + e.distinctEnds() + " of " + e.schedules());
        Hunt.Report r = hunt(FixSet.all(), "all");
        Hunt.Throughput all = r.bySize().values().stream().reduce(new Hunt.Throughput(0, 0, 0, 0), Hunt.Throughput::plus);
        assertTrue(all.distinctEnds() >= all.programs() && all.distinctEnds() <= all.interleavings(), all.toString());
    }
}
