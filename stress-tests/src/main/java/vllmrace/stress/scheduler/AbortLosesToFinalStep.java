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
 * AbortLosesToFinalStep — upstream PR #29987 "[BugFix] Eagerly abort cancelled final-step requests" (njhill,
 * merged, fixes #26400); reference §2(c)(ii).
 *
 * <p>"When requests are cancelled while executing their final step, 'completion' is subsequently handled based on
 * normal stop processing, and so the abort essentially has no effect." On a prefill node the connector then keeps
 * the blocks for a decode that never comes, until a timeout.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: schedule(1) ran R's final step)
 *                                            1. _process_input_queue
 *   2. ABORT(R) -> input_queue (only)
 *                                            3. schedule(2)
 *                                            4. update_from_output(1): R LENGTH_CAPPED
 *                                               -> request_finished: success, blocks pinned
 *                                                                                          5. ABORT(R) applied: skipped
 * </pre>
 *
 * <p>Invariant (#29987): an abort received before the output of the in-flight step is processed takes precedence
 * over normal completion.
 *
 * <p>Verdicts: {@link Reported} ({@code EAGER_ABORTS} off) must OBSERVE {@code ABORT_OVERTAKEN}; {@link Fixed}
 * (ABORTs also queued in {@code aborts_queue}, applied right before {@code update_from_output}) must never show it.
 */
public class AbortLosesToFinalStep {

    @JCStressTest
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "ABORT received and applied before update_from_output(1)")
    @Outcome(id = "COMPLETED", expect = ACCEPTABLE, desc = "ABORT received after update_from_output(1): a no-op")
    @Outcome(id = "ABORT_OVERTAKEN", expect = ACCEPTABLE_INTERESTING, desc = "the race: ABORT received before update_from_output(1) but R completed as a success")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.AbortLosesToFinalStep.scenario(Variant.REPORTED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** One busy-loop iteration: _process_input_queue, schedule(2), update_from_output(1). */
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
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "ABORT received and applied before update_from_output(1)")
    @Outcome(id = "COMPLETED", expect = ACCEPTABLE, desc = "ABORT received after update_from_output(1): a no-op")
    @Outcome(id = "ABORT_OVERTAKEN", expect = FORBIDDEN, desc = "the race must be gone with EAGER_ABORTS")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.AbortLosesToFinalStep.scenario(Variant.FIXED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** One busy-loop iteration: _process_input_queue, schedule(2), update_from_output(1). */
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
