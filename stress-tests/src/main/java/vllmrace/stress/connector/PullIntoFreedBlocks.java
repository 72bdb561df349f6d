package vllmrace.stress.connector;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.L_Result;
import vllmrace.races.Race;
import vllmrace.races.RaceScenario;
import vllmrace.races.Variant;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * PullIntoFreedBlocks — seed 003 "aggravating factor": {@code nixl/pull_scheduler.py} ~L223,
 * {@code if is_d_node and not self.is_bidirectional_kv_xfer_enabled: return False, None}: the decode side never pins
 * the blocks of a request whose NIXL pull is still in flight.
 *
 * <pre>
 *   actor 1: worker                      actor 2: EngineCore busy loop                         arbiter
 *   1. LMCache load of R completes       2-7. finished_recving(R) -> R promoted, runs
 *                                        8-10. R finishes: request_finished -> NIXL False -> B freed
 *                                        11-13. schedule: R2 gets B
 *   14. NIXL READ of R lands in B (R2's KV overwritten: silent corruption)
 * </pre>
 *
 * <p>Invariant (SC4): no transfer writes a block its request no longer owns.
 *
 * <p>Verdicts: {@link Reported} (NIXL_PIN_PULL_BLOCKS and MULTI_CONNECTOR_LOAD_DEDUP off — each alone prevents the
 * write; SCHEDULER_SKIP_LATE_REPORT on keeps the engine alive so the write is what remains) must OBSERVE
 * {@code PULL_WROTE_FREED_BLOCK}; {@link Fixed} never.
 */
public class PullIntoFreedBlocks {

    @JCStressTest
    @Outcome(id = "NO_BAD_WRITE", expect = ACCEPTABLE, desc = "no transfer wrote a freed or reallocated block")
    @Outcome(id = "PULL_WROTE_FREED_BLOCK", expect = ACCEPTABLE_INTERESTING, desc = "the race: the pull wrote B after B was freed")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.PullIntoFreedBlocks.scenario(Variant.REPORTED);

        /** The worker: R's LMCache load completes (fast), then its NIXL READ (slow). */
        @Actor
        public void workerLoadsComplete() {
            scenario.actor1().run();
        }

        /** Four busy-loop iterations: get_finished, schedule, update_from_output. */
        @Actor
        public void busyLoop() {
            scenario.actor2().run();
        }

        @Arbiter
        public void runToQuiescence(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }

    @JCStressTest
    @Outcome(id = "NO_BAD_WRITE", expect = ACCEPTABLE, desc = "no transfer wrote a freed or reallocated block")
    @Outcome(id = "PULL_WROTE_FREED_BLOCK", expect = FORBIDDEN, desc = "the race must be gone with NIXL_PIN_PULL_BLOCKS")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.PullIntoFreedBlocks.scenario(Variant.FIXED);

        /** The worker: R's LMCache load completes (fast), then its NIXL READ (slow). */
        @Actor
        public void workerLoadsComplete() {
            scenario.actor1().run();
        }

        /** Four busy-loop iterations: get_finished, schedule, update_from_output. */
        @Actor
        public void busyLoop() {
            scenario.actor2().run();
        }

        @Arbiter
        public void runToQuiescence(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }
}
