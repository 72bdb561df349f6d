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
 * DuplicateIdAbortWindow — upstream PR #15326 (hidva, closed), seed 001; re-reported as #23697 and closed
 * structurally by #27987.
 *
 * <p>{@code AsyncLLM.abort} removes the request from {@code OutputProcessor.request_states} and only then
 * awaits sending ABORT to EngineCore. EngineCore keys everything (requests, KV blocks) by request id, so it
 * relies on the wire order ADD(req1) ABORT(req1) ADD(req2) for two requests sharing an id.
 *
 * <pre>
 *   actor 1: abort(X)                          actor 2: add_request(X)            EngineCore (arbiter)
 *   1. OutputProcessor.abort_requests([X])
 *      -> request_states.pop(X)
 *   2. await abort_requests_async  ~suspends~
 *                                              3. OutputProcessor.add_request(X@2)
 *                                                 X not in request_states -> ok
 *                                              4. await add_request_async -> ADD(X@2)
 *   5. (resumes) -> ABORT(X)
 *                                                                                 6. ADD(X@2) while X@1 is live
 *                                                                                 7. ABORT(X) finishes X@2
 * </pre>
 *
 * <p>Invariant (FE1, FE2 of reference §5): frontend scope ⊇ EngineCore scope, so at most one live request per
 * id reaches EngineCore and an ABORT finishes the request it was computed for.
 *
 * <p>Verdicts: {@link Reported} (abort as reported) must OBSERVE {@code DUPLICATE_LIVE_ID} — the build reads
 * the results back and fails if it never appears. {@link Fixed} ({@code Fix.ORDERED_ABORT}: send ABORT, then
 * drop state; and {@code Fix.UNIQUE_INTERNAL_IDS}, #27987, which also closes it alone) must never show it. Run: {@code mvn verify} (quick), or the race catalogue.
 */
public class DuplicateIdAbortWindow {

    @JCStressTest
    @Outcome(id = "READD_REJECTED", expect = ACCEPTABLE, desc = "add_request saw X still running and raised")
    @Outcome(id = "READDED_AFTER_ABORT", expect = ACCEPTABLE, desc = "wire order ADD(X@1) ABORT(X@1) ADD(X@2)")
    @Outcome(id = "DUPLICATE_LIVE_ID", expect = ACCEPTABLE_INTERESTING, desc = "the race: ADD(X@2) overtook ABORT(X@1)")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.DuplicateIdAbortWindow.scenario(Variant.REPORTED);

        @Actor
        public void abort() {
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
    @Outcome(id = "READD_REJECTED", expect = ACCEPTABLE, desc = "add_request saw X still running and raised")
    @Outcome(id = "READDED_AFTER_ABORT", expect = ACCEPTABLE, desc = "wire order ADD(X@1) ABORT(X@1) ADD(X@2)")
    @Outcome(id = "DUPLICATE_LIVE_ID", expect = FORBIDDEN, desc = "the race must be gone with ORDERED_ABORT / UNIQUE_INTERNAL_IDS")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.DuplicateIdAbortWindow.scenario(Variant.FIXED);

        @Actor
        public void abort() {
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
