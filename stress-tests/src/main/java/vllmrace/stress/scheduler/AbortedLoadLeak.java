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
 * AbortedLoadLeak — the leak the review of upstream PR #32255 found (cursor bot, "KV blocks never freed if abort
 * races with finished_recving"), fixed in the merged code; reference §2(c)(iii), K1-K2.
 *
 * <p>#32255 delays the free of an aborted WAITING_FOR_REMOTE_KVS request until its {@code finished_recving}. But
 * that report may already have arrived: the id sits in {@code finished_recving_kv_req_ids} until the next
 * {@code schedule()} promotes the request. An ABORT in that window waits for a report that never comes.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: R's async load started and landed)
 *                                            1. update_from_output(2): finished_recving(R)
 *                                               -> finished_recving_kv_req_ids += R
 *   2. ABORT(R) -> input_queue, aborts_queue
 *                                            3. _process_input_queue: finish_requests(R)
 *                                               naive flag: delay_free_blocks = True
 *                                            4. schedule(3): nothing to promote
 *                                                                                          5. quiescence: R still in
 *                                                                                             requests, blocks held
 * </pre>
 *
 * <p>Invariant (SC5): every delay-freed request has exactly one future event that frees it.
 *
 * <p>Verdicts: {@link Reported} ({@code DELAY_FREE_UNLESS_RECVED} off: the PR's first, naive flag) must OBSERVE
 * {@code LEAK}; {@link Fixed} (no delay when the recv already arrived) must never show it.
 */
public class AbortedLoadLeak {

    @JCStressTest
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "R aborted; its blocks freed exactly once")
    @Outcome(id = "LEAK", expect = ACCEPTABLE_INTERESTING, desc = "the race: free delayed for a finished_recving that already came; R and its blocks stay forever")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.AbortedLoadLeak.scenario(Variant.REPORTED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** Update_from_output(2) brings finished_recving(R); _process_input_queue; schedule(3) promotes R. */
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
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "R aborted; its blocks freed exactly once")
    @Outcome(id = "LEAK", expect = FORBIDDEN, desc = "the race must be gone with DELAY_FREE_UNLESS_RECVED")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.AbortedLoadLeak.scenario(Variant.FIXED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** Update_from_output(2) brings finished_recving(R); _process_input_queue; schedule(3) promotes R. */
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
