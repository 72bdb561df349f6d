package vllmrace.races.connector;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;
import vllmrace.races.RaceScenario;

/**
 * PullIntoFreedBlocks (seed 003, "aggravating factor"): the {@link LateLoadCompletionScenario} set-up and actors,
 * classified by SC4 only. The NIXL decode side returns False from {@code request_finished} while R's pull is in flight,
 * so R's block is freed (and given to R2) when R finishes; the pull then writes it. The other seed-003 findings (a
 * duplicate or late report) are LateLoadCompletionUnion's; here they count as {@code NO_BAD_WRITE}.
 */
public final class PullIntoFreedBlocksScenario implements RaceScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("no transfer wrote a block after it was freed or reallocated (other seed-003 findings: LateLoadCompletionUnion)") NO_BAD_WRITE,
        @Violating("the NIXL pull wrote R's block after R finished and the block was freed (and maybe given to R2)") PULL_WROTE_FREED_BLOCK,
        @Violating("an exception or an engine death: a modelling error here (the reported variant skips late reports)") UNEXPECTED;
    }

    private final LateLoadCompletionScenario scenario;

    public PullIntoFreedBlocksScenario(FixSet fixes) {
        scenario = new LateLoadCompletionScenario(fixes);
    }

    @Override
    public Coroutine<?> actor1() {
        return scenario.actor1();
    }

    @Override
    public Coroutine<?> actor2() {
        return scenario.actor2();
    }

    @Override
    public Outcome arbiter() {
        LateLoadCompletionScenario.Outcome outcome = scenario.arbiter();
        if (scenario.rig().has(ViolationKind.WRITE_INTO_FREED_BLOCK)) {
            return Outcome.PULL_WROTE_FREED_BLOCK;
        }
        return switch (outcome) {
            case COMPLETED, DUPLICATE_TRANSFER_EVENT -> Outcome.NO_BAD_WRITE;
            default -> Outcome.UNEXPECTED;
        };
    }

    @Override
    public List<Violation> violations() {
        return scenario.violations();
    }

    @Override
    public StepLog stepLog() {
        return scenario.stepLog();
    }

    @Override
    public int setupSteps() {
        return scenario.setupSteps();
    }

    public ConnectorRig rig() {
        return scenario.rig();
    }
}
