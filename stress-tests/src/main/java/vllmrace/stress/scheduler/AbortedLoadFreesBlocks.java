package vllmrace.stress.scheduler;

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
 * AbortedLoadFreesBlocks — upstream PR #32255 "[BugFix] scheduler: Delay freeing blocks of aborted async loads"
 * (merged); reference §2(c)(iii), L1-L3.
 *
 * <p>A request whose prompt KV is pulled from a remote prefill instance waits in WAITING_FOR_REMOTE_KVS, holding
 * the blocks the pull writes into. The decode-side NIXL connector never takes the blocks over
 * ({@code request_finished} returns False), so an ABORT used to free them at once while the pull still ran.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop + worker         arbiter
 *                                            1-3. schedule(1): R gets block B (the only one),
 *                                                 async load into B starts; R2 finds no block
 *   4. ABORT(R) -> input_queue, aborts_queue
 *                                            5. _process_input_queue: finish_requests(R)
 *                                               -> B freed (before #32255)
 *                                            6. schedule(2): R2 gets B
 *                                            7. update_from_output(2)
 *                                            8. worker: R's load lands in B -> R2's KV overwritten
 * </pre>
 *
 * <p>Invariant (SC4): a block that an in-flight load writes is not returned to the pool until
 * {@code finished_recving} of that load.
 *
 * <p>Verdicts: {@link Reported} ({@code DELAY_FREE_ABORTED_LOAD} off) must OBSERVE {@code LOAD_WROTE_FREED_BLOCK};
 * {@link Fixed} must never show it.
 */
public class AbortedLoadFreesBlocks {

    @JCStressTest
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "R aborted; B freed only once nothing writes it; R2 ran")
    @Outcome(id = "LOAD_WROTE_FREED_BLOCK", expect = ACCEPTABLE_INTERESTING, desc = "the race: R's load landed in B after B was freed (and maybe given to R2)")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.AbortedLoadFreesBlocks.scenario(Variant.REPORTED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** Schedule(1) starts R's async load into block B; schedule(2); the load lands in B. */
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
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "R aborted; B freed only once nothing writes it; R2 ran")
    @Outcome(id = "LOAD_WROTE_FREED_BLOCK", expect = FORBIDDEN, desc = "the race must be gone with DELAY_FREE_ABORTED_LOAD")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.AbortedLoadFreesBlocks.scenario(Variant.FIXED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** Schedule(1) starts R's async load into block B; schedule(2); the load lands in B. */
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
