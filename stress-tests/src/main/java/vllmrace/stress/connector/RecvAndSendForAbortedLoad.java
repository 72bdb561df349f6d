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
 * RecvAndSendForAbortedLoad — issue #46240 (PRs #46304, #47499, #53079 proposed scheduler-side skips; njhill: "There
 * should not be multiple completion events even in the case of abort ... it's a bug in the kv connector").
 *
 * <p>Decode engine, MultiConnector(NixlConnector, LMCacheConnectorV1 offloading every finished request). R (remote-prefill
 * params) and R2 (local traffic keeping the busy loop stepping) wait to be scheduled.
 *
 * <pre>
 *   actor 1: API server                  actor 2: EngineCore busy loop + worker                 arbiter
 *                                        1. schedule: R's block allocated, NIXL pull starts;
 *                                           R is WAITING_FOR_REMOTE_KVS
 *   2. client disconnects: ABORT(R)
 *                                        3. NIXL READ of R completes
 *                                        4. _process_input_queue: finish_requests(R, ABORTED)
 *                                           R waits for KV: delay-freed (#32255)
 *                                           request_finished: NIXL False, LMCache starts a save: True
 *                                        5. get_finished: finished_recving(R)
 *                                           R is finished: _free_blocks(R), del requests[R]
 *                                                                                                6. the save of R
 *                                                                                                   completes: it read
 *                                                                                                   a freed block
 *                                                                                                7. finished_sending(R):
 *                                                                                                   assert req_id in
 *                                                                                                   self.requests: dead
 * </pre>
 *
 * <p>Run one after the other the actors are clean: an ABORT applied before step 1 finds R with no load and no blocks;
 * applied after the iteration that delivers finished_recving(R), it leaves only the save. Only an ABORT landing inside
 * the load's window shows the race.
 *
 * <p>Invariant (CN1, SC4): each request gets exactly one terminal transfer event, after every transfer touching its
 * blocks has completed. Verdicts: {@link Reported} (NO_SAVE_WHILE_LOADING off; every other fix on, including seed
 * 003's scheduler skip, so the engine survives and the bug shows as the save reading a freed block; without that skip,
 * as upstream, the engine dies) must OBSERVE a violation; {@link Fixed} never.
 */
public class RecvAndSendForAbortedLoad {

    @JCStressTest
    @Outcome(id = "ABORTED_CLEAN", expect = ACCEPTABLE, desc = "ABORT before the load or after its recv: one terminal event")
    @Outcome(id = "ENGINE_DEAD", expect = ACCEPTABLE_INTERESTING, desc = "the race: recv and send both completed R")
    @Outcome(id = "SAVE_READ_FREED_BLOCK", expect = ACCEPTABLE_INTERESTING, desc = "the race: the save read R's freed block")
    @Outcome(id = "DUPLICATE_TRANSFER_EVENT", expect = ACCEPTABLE_INTERESTING, desc = "the race: two terminal events")
    @Outcome(id = "LEAK", expect = FORBIDDEN, desc = "not expected in this scenario")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.RecvAndSendForAbortedLoad.scenario(Variant.REPORTED);

        /** The client disconnects: ABORT(R) reaches EngineCore's input socket. */
        @Actor
        public void clientAborts() {
            scenario.actor1().run();
        }

        /** The NIXL READ of R completes, then three busy-loop iterations. */
        @Actor
        public void workerAndBusyLoop() {
            scenario.actor2().run();
        }

        @Arbiter
        public void runToQuiescence(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }

    @JCStressTest
    @Outcome(id = "ABORTED_CLEAN", expect = ACCEPTABLE, desc = "R aborted: one terminal event")
    @Outcome(id = "ENGINE_DEAD", expect = FORBIDDEN, desc = "must be gone: no save starts while the load is in flight")
    @Outcome(id = "SAVE_READ_FREED_BLOCK", expect = FORBIDDEN, desc = "must be gone")
    @Outcome(id = "DUPLICATE_TRANSFER_EVENT", expect = FORBIDDEN, desc = "must be gone")
    @Outcome(id = "LEAK", expect = FORBIDDEN, desc = "must be gone")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.RecvAndSendForAbortedLoad.scenario(Variant.FIXED);

        /** The client disconnects: ABORT(R) reaches EngineCore's input socket. */
        @Actor
        public void clientAborts() {
            scenario.actor1().run();
        }

        /** The NIXL READ of R completes, then three busy-loop iterations. */
        @Actor
        public void workerAndBusyLoop() {
            scenario.actor2().run();
        }

        @Arbiter
        public void runToQuiescence(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }
}
