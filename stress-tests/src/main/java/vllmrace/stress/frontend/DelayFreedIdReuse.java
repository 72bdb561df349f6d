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
 * DelayFreedIdReuse — upstream PR #27987 ("[Core] Add a random suffix to frontend-provided request IDs", markmc,
 * merged), its point 3: P/D, where the prefill engine keeps tracking a request long after the frontend finished
 * it (#20139); reference §1(d). The frontend ordering of #15326 (ORDERED_ABORT) is ON in both variants.
 *
 * <p>A connector that async-saves finished requests makes {@code request_finished} return
 * {@code delay_free_blocks=True}: an aborted request stays in {@code Scheduler.requests} (FINISHED_ABORTED) until
 * its {@code finished_sending}.
 *
 * <pre>
 *   actor 1: abort(X), then EngineCore applies it      actor 2: add_request(X)
 *   1. flatten_req_to_abort([X])  (X still tracked)
 *   2. await abort_requests_async -> ABORT(X@1)
 *   3. abort_requests: request_states.pop(X)
 *                                                      4. OutputProcessor.add_request(X@2): X untracked -> ok
 *                                                      5. await add_request_async -> ADD(X@2)
 *   6. EngineCore busy loop: ABORT(X@1) -> finish_requests -> request_finished: delay=True, X@1 stays in requests
 *                            ADD(X@2) -> Scheduler.add_request: X already held -> duplicate id
 * </pre>
 *
 * <p>Invariant (FE1 of reference §5, and the #15326 invariant frontend scope ⊇ EngineCore scope): at most one
 * request per id in EngineCore. The wire order ADD(X@1) ABORT(X@1) ADD(X@2) is exactly what #15326 enforces, and
 * still is not enough.
 *
 * <p>Verdicts: {@link Reported} (every fix on except UNIQUE_INTERNAL_IDS, so ORDERED_ABORT is on) must OBSERVE
 * {@code COLLIDES_WITH_DELAY_FREED} — the build reads the results back and fails if it never appears.
 * {@link Fixed} (UNIQUE_INTERNAL_IDS: X@2 is X-2 in EngineCore) must never show it.
 */
public class DelayFreedIdReuse {

    @JCStressTest
    @Outcome(id = "READD_REJECTED", expect = ACCEPTABLE, desc = "add_request saw X still tracked and raised")
    @Outcome(id = "READDED_BESIDE_DELAY_FREED", expect = ACCEPTABLE, desc = "ADD(X@2) applied after X@1's release")
    @Outcome(id = "COLLIDES_WITH_DELAY_FREED", expect = ACCEPTABLE_INTERESTING, desc = "the race: ADD(X@2) met the delay-freed X@1")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.DelayFreedIdReuse.scenario(Variant.REPORTED);

        @Actor
        public void abortThenEngineCore() {
            scenario.actor1().run();
        }

        @Actor
        public void addRequest() {
            scenario.actor2().run();
        }

        @Arbiter
        public void engineCoreReleasesAndDrains(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }

    @JCStressTest
    @Outcome(id = "READD_REJECTED", expect = ACCEPTABLE, desc = "add_request saw X still tracked and raised")
    @Outcome(id = "READDED_BESIDE_DELAY_FREED", expect = ACCEPTABLE, desc = "X-2 runs beside the delay-freed X-1")
    @Outcome(id = "COLLIDES_WITH_DELAY_FREED", expect = FORBIDDEN, desc = "the race must be gone with UNIQUE_INTERNAL_IDS")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.DelayFreedIdReuse.scenario(Variant.FIXED);

        @Actor
        public void abortThenEngineCore() {
            scenario.actor1().run();
        }

        @Actor
        public void addRequest() {
            scenario.actor2().run();
        }

        @Arbiter
        public void engineCoreReleasesAndDrains(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }
}
