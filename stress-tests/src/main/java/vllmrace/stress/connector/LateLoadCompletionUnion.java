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
 * LateLoadCompletionUnion — seed 003: MultiConnector.get_finished unions finished_recving across children without
 * dedup ({@code finished_recving.update(recving or ())}), while it dedups sends by {@code _extra_async_saves}.
 *
 * <p>Decode engine, MultiConnector(NixlConnector, LMCacheMPConnector). R has remote-prefill params and an LMCache
 * prefix hit: {@code start_load_kv} is broadcast, so a NIXL pull and an LMCache load both write R's block B.
 *
 * <pre>
 *   actor 1: worker                      actor 2: EngineCore busy loop                         arbiter
 *   1. LMCache load of R completes
 *      (fast, CPU memory)                2-4. get_finished: finished_recving(R) -> ready
 *                                        5-7. schedule: R promoted, runs
 *                                        8-10. update_from_output: R finishes, B freed (NIXL: False)
 *                                        11-13. R2 gets B
 *   14. NIXL READ of R completes
 *       (slow, GB-scale over TCP)                                                               get_finished:
 *                                                                                               finished_recving(R)
 *                                                                                               -> assert req_id in
 *                                                                                               self.requests: dead
 * </pre>
 *
 * <p>Run one after the other the actors are clean (both completions reach one get_finished and the union collapses
 * them, or none arrives before R could run): only an interleaving shows the race.
 * </pre>
 *
 * <p>Invariant (CN1): each request's load completion reaches the scheduler exactly once. A late report landing while R
 * runs fails {@code assert RequestStatus.is_finished} instead: also engine death.
 *
 * <p>Verdicts: {@link Reported} (MULTI_CONNECTOR_LOAD_DEDUP and SCHEDULER_SKIP_LATE_REPORT off, the sufficient fix
 * directions; NIXL_PIN_PULL_BLOCKS alone does not close it) must OBSERVE {@code ENGINE_DEAD}; {@link Fixed} never.
 */
public class LateLoadCompletionUnion {

    @JCStressTest
    @Outcome(id = "COMPLETED", expect = ACCEPTABLE, desc = "R loaded once, ran, finished; R2 ran")
    @Outcome(id = "ENGINE_DEAD", expect = ACCEPTABLE_INTERESTING, desc = "the race: a late finished_recving(R) hit an upstream assert")
    @Outcome(id = "PULL_WROTE_FREED_BLOCK", expect = ACCEPTABLE_INTERESTING, desc = "engine alive, the pull wrote a freed block")
    @Outcome(id = "DUPLICATE_TRANSFER_EVENT", expect = ACCEPTABLE_INTERESTING, desc = "engine alive, R reported twice")
    @Outcome(id = "LEAK", expect = FORBIDDEN, desc = "not expected in this scenario")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.LateLoadCompletionUnion.scenario(Variant.REPORTED);

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
    @Outcome(id = "COMPLETED", expect = ACCEPTABLE, desc = "R loaded once, ran, finished; R2 ran")
    @Outcome(id = "ENGINE_DEAD", expect = FORBIDDEN, desc = "the race must be gone with every seed-003 fix direction")
    @Outcome(id = "PULL_WROTE_FREED_BLOCK", expect = FORBIDDEN, desc = "must be gone")
    @Outcome(id = "DUPLICATE_TRANSFER_EVENT", expect = FORBIDDEN, desc = "must be gone")
    @Outcome(id = "LEAK", expect = FORBIDDEN, desc = "must be gone")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.LateLoadCompletionUnion.scenario(Variant.FIXED);

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
