package vllmrace.races.connector;

import java.util.List;
import vllmrace.races.Ending;

import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;
import vllmrace.races.TwoActorScenario;

/**
 * PullIntoFreedBlocks: the NIXL decode side returns False from request_finished with a pull in flight; the finished
 * request's blocks are freed and reallocated while the pull still writes into them.
 *
 * <p><b>Upstream.</b> Seed 003's "aggravating factor" (issue #53049, open): {@code nixl/pull_scheduler.py}
 * {@code request_finished}, {@code if is_d_node and not self.is_bidirectional_kv_xfer_enabled: return False, None}: the
 * decode side never pins the blocks of a request whose NIXL pull is still in flight. No PR proposes the pin.
 *
 * <p><b>Set-up and actors.</b> The {@link LateLoadCompletionUnionScenario} set-up and actors, classified by SC4 only. The other
 * seed-003 findings (engine death, a duplicate or late report) are LateLoadCompletionUnion's; here they count as
 * {@code NO_BAD_WRITE}.
 *
 * <pre>
 *   actor 1: worker                      actor 2: EngineCore busy loop                         arbiter
 *   1. LMCache load of R completes       2-7. finished_recving(R) -> R promoted, runs
 *                                        8-10. R finishes: request_finished -> NIXL False -> B freed
 *                                        11-13. schedule: R2 gets B
 *   14. NIXL READ of R lands in B (R2's KV overwritten: silent corruption)
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (SC4): no transfer writes a block its request no longer owns.
 *
 * <p><b>Verdicts.</b> Reported ({@code NIXL_PIN_PULL_BLOCKS}, {@code MULTI_CONNECTOR_LOAD_DEDUP} and
 * {@code LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN} off, each alone prevents the write; {@code SCHEDULER_SKIP_LATE_REPORT} on keeps
 * the engine alive so the write is what remains): some interleaving shows {@code PULL_WROTE_FREED_BLOCK}. Fixed: never.
 * vLLM main: closed, by #47505 (no second load with the in-tree LMCache child). vLLM main + out-of-tree LMCache MP: racy.
 */
public final class PullIntoFreedBlocksScenario extends TwoActorScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean(value = "no transfer wrote a block after it was freed or reallocated",
                tolerates = {ViolationKind.DUPLICATE_TRANSFER_EVENT, ViolationKind.LATE_TRANSFER_REPORT},
                toleratesWhy = "LateLoadCompletionUnion's: the same seed 003 run reports the recv twice (and its engine may die "
                        + "of it); that race is judged there, this one judges only the write") NO_BAD_WRITE,
        @Violating(value = "the NIXL pull wrote R's block after R finished and the block was freed (and maybe given to R2)", detectors = {ViolationKind.WRITE_INTO_FREED_BLOCK},
                cascade = {ViolationKind.DUPLICATE_TRANSFER_EVENT, ViolationKind.LATE_TRANSFER_REPORT},
                cascadeWhy = "LateLoadCompletionUnion: the same seed 003 run reports the request's recv twice (its race, judged there)") PULL_WROTE_FREED_BLOCK;
    }

    private final LateLoadCompletionUnionScenario scenario;
    private RaceOutcome inner;

    /** The scenario at one point of LateLoadCompletionUnion's family. */
    public PullIntoFreedBlocksScenario(FixSet fixes, Configuration config, Params p) {
        this(new LateLoadCompletionUnionScenario(fixes, config, p));
    }

    /** The same run as LateLoadCompletionUnion's, judged for the write only. */
    private PullIntoFreedBlocksScenario(LateLoadCompletionUnionScenario scenario) {
        super(scenario.rig());
        this.scenario = scenario;
        actors(scenario.actor1(), scenario.actor2());
    }

    @Override
    protected void settle() {
        inner = scenario.arbiter(); // LateLoadCompletionUnion's run, settled and classified
    }

    @Override
    protected List<Ending> endings() {
        // every other seed-003 finding (engine death, a duplicate report, a leak) is LateLoadCompletionUnion's
        return List.of(ending(Outcome.NO_BAD_WRITE).and("LateLoadCompletionUnion's run ended as one of its declared outcomes",
                () -> !inner.modellingError()));
    }

    public ConnectorRig rig() {
        return scenario.rig();
    }
}
