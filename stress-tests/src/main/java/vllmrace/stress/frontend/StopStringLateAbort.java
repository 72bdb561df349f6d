package vllmrace.stress.frontend;

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
 * StopStringLateAbort — upstream issue #23697 (re-report of the #15326 window on the stop-string path; reference
 * §1(b)/(c)); #24382 proposed a "pending abort" state (closed); closed structurally by #27987 (unique internal ids).
 * The ordered variant is #15326's {@code _handle_finished_reqs} reading: send ABORT for {@code reqs_to_abort}, then
 * drop their state ({@code Fix.ORDERED_FINISH_ABORT}).
 *
 * <p>EngineCore does not know stop strings: the frontend's {@code process_outputs} finds one, finishes the request
 * and drops its state at once, and the output handler only then awaits sending ABORT for it.
 *
 * <pre>
 *   actor 1: output_handler                        actor 2: add_request(X)            EngineCore (arbiter)
 *   1. await get_output_async -> X@1's token
 *   2. process_outputs: stop string in X@1
 *      -> request_states.pop(X), reqs_to_abort=[X]
 *                                                  3. OutputProcessor.add_request(X@2)
 *                                                     X not in request_states -> ok
 *                                                  4. await add_request_async -> ADD(X@2)
 *   5. await abort_requests_async([X]) -> ABORT(X)
 *                                                                                     6. ADD(X@2) while X@1 is live
 *                                                                                     7. ABORT(X) finishes X@2
 * </pre>
 *
 * <p>Invariant (FE1, FE2, FE3 of reference §5): frontend scope ⊇ EngineCore scope, so at most one live request per
 * id reaches EngineCore, an ABORT finishes the request it was computed for, and every caller gets a final output.
 *
 * <p>Verdicts: {@link Reported} (ORDERED_FINISH_ABORT and UNIQUE_INTERNAL_IDS off) must OBSERVE
 * {@code LATE_ABORT_KILLS_READD} — the build reads the results back and fails if it never appears. {@link Fixed}
 * (every fix on) must never show it; each of the two switches closes it alone (fix matrix, model tests).
 */
public class StopStringLateAbort {

    @JCStressTest
    @Outcome(id = "READD_REJECTED", expect = ACCEPTABLE, desc = "add_request saw X still tracked and raised")
    @Outcome(id = "READDED_AFTER_ABORT", expect = ACCEPTABLE, desc = "wire order ADD(X@1) ABORT(X@1) ADD(X@2)")
    @Outcome(id = "LATE_ABORT_KILLS_READD", expect = ACCEPTABLE_INTERESTING, desc = "the race: ADD(X@2) overtook the stop string's ABORT(X@1)")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.StopStringLateAbort.scenario(Variant.REPORTED);

        @Actor
        public void outputHandler() {
            scenario.actor1().run();
        }

        @Actor
        public void addRequest() {
            scenario.actor2().run();
        }

        @Arbiter
        public void engineCoreDrains(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }

    @JCStressTest
    @Outcome(id = "READD_REJECTED", expect = ACCEPTABLE, desc = "add_request saw X still tracked and raised")
    @Outcome(id = "READDED_AFTER_ABORT", expect = ACCEPTABLE, desc = "X re-added after ABORT(X@1), or under a fresh internal id")
    @Outcome(id = "LATE_ABORT_KILLS_READD", expect = FORBIDDEN, desc = "the race must be gone with ORDERED_FINISH_ABORT / UNIQUE_INTERNAL_IDS")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.StopStringLateAbort.scenario(Variant.FIXED);

        @Actor
        public void outputHandler() {
            scenario.actor1().run();
        }

        @Actor
        public void addRequest() {
            scenario.actor2().run();
        }

        @Arbiter
        public void engineCoreDrains(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }
}
