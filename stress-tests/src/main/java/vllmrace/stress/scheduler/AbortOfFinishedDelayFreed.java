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
 * AbortOfFinishedDelayFreed — upstream PR #25067 "[NIXL] Ignore abort on already-finished request" (markmc,
 * merged); reference §4 S1.
 *
 * <p>On a prefill (P) node the NIXL connector's {@code request_finished} returns True for a request that finished
 * normally: its blocks stay allocated, and the request stays in {@code Scheduler.requests}, finished, until the
 * decoder has read them ({@code finished_sending}). A client disconnect's ABORT for that request used to re-run
 * {@code _free_request} on it.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop + worker         arbiter
 *                                            (set-up: schedule(1) ran R's final step)
 *                                            1-3. _process_input_queue, schedule(2),
 *                                                 update_from_output(1): R LENGTH_CAPPED
 *                                                 -> request_finished: send, delay the free
 *   4. ABORT(R) -> input_queue, aborts_queue
 *                                            5. worker: the decoder's read completes
 *                                            6. _process_input_queue: finish_requests(R)
 *                                               (before #25067: not skipped) -> _free_request AGAIN
 *                                               -> request_finished(ABORTED): free now, del requests[R]
 *                                            7-11. schedule(3) ships R in finished_req_ids;
 *                                                 update_from_output(3): finished_sending(R)
 *                                                 -> KeyError (engine dead)
 * </pre>
 *
 * <p>Every variant here also has seed 003's proposed skip of late reports ON, so the final assert is logged and
 * skipped instead of killing EngineCore; the verdict reads the double {@code _free_request} (SC1) itself.
 *
 * <p>Invariants (reference §5): SC1 {@code _free_request} at most once; SC2 {@code _free_blocks} once; SC5 a
 * delay-freed request gets exactly one releasing event.
 *
 * <p>Verdicts: {@link Reported} ({@code SKIP_ABORT_OF_FINISHED} off) must OBSERVE {@code REFREED_THEN_KEYERROR};
 * {@link Fixed} must never show it. Run: {@code mvn verify} (quick), or the race catalogue.
 */
public class AbortOfFinishedDelayFreed {

    @JCStressTest
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "ABORT applied before update_from_output(1): R aborted and freed at once")
    @Outcome(id = "COMPLETED", expect = ACCEPTABLE, desc = "ABORT skipped (R finished): finished_sending frees R once")
    @Outcome(id = "REFREED_THEN_KEYERROR", expect = ACCEPTABLE_INTERESTING, desc = "the race: finished R re-freed, blocks freed during the send, finished_sending finds no R")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.AbortOfFinishedDelayFreed.scenario(Variant.REPORTED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** Update_from_output(1) finishes R, the decoder's read completes, finished_sending(R) frees R. */
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
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "ABORT applied before update_from_output(1): R aborted and freed at once")
    @Outcome(id = "COMPLETED", expect = ACCEPTABLE, desc = "ABORT skipped (R finished): finished_sending frees R once")
    @Outcome(id = "REFREED_THEN_KEYERROR", expect = FORBIDDEN, desc = "the race must be gone with SKIP_ABORT_OF_FINISHED")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.AbortOfFinishedDelayFreed.scenario(Variant.FIXED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** Update_from_output(1) finishes R, the decoder's read completes, finished_sending(R) frees R. */
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
