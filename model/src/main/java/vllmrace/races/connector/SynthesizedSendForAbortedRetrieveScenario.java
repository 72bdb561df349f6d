package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_ABORTED;
import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.deploy.ConfigSwitch;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.Ending;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;
import vllmrace.races.Violating;

/**
 * SynthesizedSendForAbortedRetrieve: a request aborted while the LMCache MP connector's own retrieve of it is in flight
 * gets two terminal transfer events: the retrieve's finished_recving and a finished_sending the worker makes up for a
 * store that was never submitted.
 *
 * <p><b>Upstream.</b> LMCache issue #4938 (open; the same report against vLLM forks, e.g. "Aborted async retrieve can
 * emit dual completion and kill EngineCore"): {@code LMCacheMPConnector.request_finished} returns {@code True, None}
 * whatever happened (vLLM's lmcache_mp_connector.py@474b0b8c), and {@code LMCacheMPWorkerAdapter.get_finished}
 * (LMCache's vllm_multi_process_adapter.py@39d632ad) puts every engine-finished id with no store future into
 * {@code ret_stores}. An aborted request never scheduled a token, so it has no store: its id is reported as sent at the
 * first poll that sees it, while its retrieve is in flight or after the retrieve was reported. Proposed fixes: LMCache
 * PR #4939 (open; it rebases #4136, open): the tracker stays LOADING until finished_recving, and an aborted retrieve is
 * not also reported as a store completion ({@code LMCACHE_MP_ABORTED_RETRIEVE_NOT_STORED}); #4284 (closed) removed only
 * a pair reported in the same poll. The suite's hunt found this shape with every other fix on: #46240's
 * {@code NO_SAVE_WHILE_LOADING} keeps the other children from saving, not the loading child itself.
 *
 * <p><b>Set-up and actors.</b> The decode engine's connector is LMCache alone (in tree; LMCache's own with the
 * out-of-tree profile: the same code here); a pool of six blocks. The CPU cache holds R's 4-token prompt; R (max_tokens 1)
 * and R2 (local, max_tokens 6: traffic that keeps the busy loop polling {@code get_finished}) wait to be scheduled.
 * Actor 1: the client disconnects: ABORT(R) reaches EngineCore's input socket. Actor 2: a busy-loop iteration (R's
 * lookup hits, its block is allocated and the retrieve starts: R is WAITING_FOR_REMOTE_KVS), two more iterations (a
 * slow retrieve: long external prefixes take many steps), the retrieve lands, a last iteration.
 *
 * <pre>
 *   actor 1: API server                 actor 2: EngineCore busy loop + worker                  arbiter
 *                                       1. schedule: R's block allocated, LMCache retrieve
 *                                          starts; R is WAITING_FOR_REMOTE_KVS
 *   2. client disconnects: ABORT(R)
 *                                       3. _process_input_queue: finish_requests(R, ABORTED):
 *                                          R waits for KV: delay-freed; request_finished
 *                                          returns True; no store was submitted
 *                                       4. get_finished: R is engine-finished with no store
 *                                          future: ret_stores = {R}; finished_sending(R):
 *                                          _free_blocks(R), del requests[R]
 *                                       5. the retrieve of R lands: it writes a freed block
 *                                       6. get_finished: finished_recving(R):
 *                                          assert req_id in self.requests: EngineCore dead
 * </pre>
 * If the retrieve lands before step 4, the poll reports both ids together: finished_recving frees R first, and
 * finished_sending's {@code assert req_id in self.requests} fails (#4284's same-poll case).
 *
 * <p>Run one after the other the actors are clean: an ABORT applied before step 1 finds R with no retrieve, and one
 * applied after the iteration that reports finished_recving(R) finds R running or done; its finished id then has
 * nothing in flight and the made-up send is its only terminal event.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the abort and the retrieve's report need no step in flight.
 *
 * <p><b>Invariant</b> (CN1, SC4): each request gets exactly one terminal transfer event, after every transfer touching
 * its blocks has completed.
 *
 * <p><b>Verdicts.</b> Reported ({@code LMCACHE_MP_ABORTED_RETRIEVE_NOT_STORED} off; every other fix on, including seed
 * 003's scheduler skip, so the engine survives and the bug shows as two terminal events or the retrieve writing a
 * freed block): some interleaving violates. Fixed: never. vLLM main: racy, in tree and with LMCache's own connector
 * (#4939 is open; without the skip the engine dies).
 */
public final class SynthesizedSendForAbortedRetrieveScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R aborted before its retrieve, inside its window with the fix, or after its finished_recving: exactly one "
                + "terminal transfer event; its block freed once, after every transfer") ABORTED_CLEAN,
        @Clean("R finished normally before its ABORT was applied; the abort was a no-op, its block freed once, after every "
                + "transfer") FINISHED_BEFORE_ABORT,
        @Violating(value = "R got finished_recving and a made-up finished_sending: the second hit assert req_id in "
                + "self.requests, EngineCore dead", detectors = {ViolationKind.DUPLICATE_TRANSFER_EVENT, ViolationKind.LATE_TRANSFER_REPORT},
                cascade = {ViolationKind.WRITE_INTO_FREED_BLOCK},
                cascadeWhy = "when the made-up send came first, the retrieve landed in the block it freed") ENGINE_DEAD,
        @Violating(value = "engine alive, but R's retrieve wrote its block after the made-up finished_sending freed it",
                detectors = {ViolationKind.WRITE_INTO_FREED_BLOCK},
                cascade = {ViolationKind.DUPLICATE_TRANSFER_EVENT},
                cascadeWhy = "the retrieve's own finished_recving follows, a second terminal event") RETRIEVE_INTO_FREED_BLOCK,
        @Violating(value = "engine alive, but R's transfers reached the scheduler as two terminal events",
                detectors = {ViolationKind.DUPLICATE_TRANSFER_EVENT}) DUPLICATE_TRANSFER_EVENT;
    }

    /** The scenario at one point of its family: {@code priorUse} only. */
    public SynthesizedSendForAbortedRetrieveScenario(FixSet fixes, Configuration config, Params p) {
        this(new LmCacheConnector[1], fixes, config, p);
    }

    private SynthesizedSendForAbortedRetrieveScenario(LmCacheConnector[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 6, kv -> List.of(n[0] = config.isOn(ConfigSwitch.OUT_OF_TREE_LMCACHE_MP)
                ? LmCacheConnector.outOfTree("LMCacheMPConnector", kv, false)
                : new LmCacheConnector("LMCacheMPConnector", kv, false, fixes, config))), p);
        LmCacheConnector lmcache = n[0];
        lmcache.cachedPrefix(REQUEST_ID, 4);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4, 6);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        requireSetUp(rig.request(REQUEST_ID).status() == RequestStatus.WAITING, "R should wait to be scheduled: " + rig.request(REQUEST_ID));
        actors(rig.actor("API server: client disconnects")
                        .worker("AsyncLLM.abort: ABORT(R) sent to EngineCore", () -> rig.sendAbort(REQUEST_ID))
                        .build(),
                rig.actor("EngineCore busy loop + worker")
                        .iteration().iteration().iteration()
                        .worker("LMCache worker: the retrieve of R lands, if one was started (writes R's block)", () -> {
                            if (lmcache.hasUnreportedLoad(REQUEST_ID) && lmcache.isLoadInFlight(REQUEST_ID)) {
                                lmcache.completeLoad(REQUEST_ID);
                            }
                        })
                        .iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.ABORTED_CLEAN).and(finished(REQUEST_ID, FINISHED_ABORTED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)),
                ending(Outcome.FINISHED_BEFORE_ABORT).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED),
                        finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
