package vllmrace.races.connector;

import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import java.util.List;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;
import vllmrace.races.Violating;

/**
 * RecvAndSendForAbortedLoad: a request aborted while its async load is in flight is delay-freed, and request_finished
 * starts an async save in another child: recv and send both complete it, and the second hits assert req_id in
 * self.requests.
 *
 * <p><b>Upstream.</b> Issue #46240 (open; lifecycle §3(b) hazard 4, §4 S2): nothing coordinates a pending recv with
 * pending sends. Scheduler-side skips were proposed (#46304 open, #47499 and #53079 closed); njhill on #53079: "There
 * should not be multiple completion events even in the case of abort ... it's a bug in the kv connector"; orozery on
 * #46304: keep calling {@code request_finished} immediately on abort. The switch {@code NO_SAVE_WHILE_LOADING} is this
 * suite's connector-side proposal along those lines (MooncakeStore has its own merged analogue, #43371).
 *
 * <p><b>Set-up and actors.</b> The decode engine's MultiConnector has a NIXL decode child and an LMCache child that
 * offloads every finished request ({@code request_finished} → async save). A pool of six blocks. R (4-token prompt,
 * max_tokens 1, remote-prefill params) and R2 (local, max_tokens 6: other traffic that keeps the busy loop stepping, and
 * so polling {@code get_finished}) are in the scheduler's waiting queue. Actor 1: the client disconnects: ABORT(R)
 * reaches EngineCore's input socket. Actor 2: a busy-loop iteration (schedule allocates R's block and starts the NIXL
 * pull: R is WAITING_FOR_REMOTE_KVS), the NIXL READ of R completes, two more iterations (finished_recving(R); R promoted
 * and run).
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
 * applied after the iteration that delivers finished_recving(R), it leaves only the save. Only an ABORT landing inside the
 * load's window shows the race.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (CN1, SC4): each request gets exactly one terminal transfer event, after every transfer touching its
 * blocks has completed.
 *
 * <p><b>Verdicts.</b> Reported ({@code NO_SAVE_WHILE_LOADING} off; every other fix on, including seed 003's scheduler
 * skip, so the engine survives and the bug shows as the save reading a freed block): some interleaving violates. Fixed:
 * never. vLLM main: racy (without the skip the engine dies: {@code ENGINE_DEAD}).
 */
public final class RecvAndSendForAbortedLoadScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R aborted (before its load, inside its window with the fix, or after its recv) with exactly one terminal transfer event; its block freed once, after every transfer") ABORTED_CLEAN,
        @Clean("R finished normally before its ABORT was applied (the sync Scheduler processed its step in the same "
                + "busy-loop iteration); the abort was a no-op, its block freed once, after every transfer") FINISHED_BEFORE_ABORT,
        @Violating(value = "R got both finished_recving and finished_sending: the second hit assert req_id in self.requests, EngineCore dead", detectors = {ViolationKind.DUPLICATE_TRANSFER_EVENT, ViolationKind.LATE_TRANSFER_REPORT},
                cascade = {ViolationKind.WRITE_INTO_FREED_BLOCK, ViolationKind.DOUBLE_FREE_REQUEST, ViolationKind.OUTPUT_FOR_FINISHED_REQUEST},
                cascadeWhy = "before the second report kills the engine the offload may read the block the recv freed; without #25067/#33377 the abort is applied twice") ENGINE_DEAD,
        @Violating(value = "engine alive, but the offload of R touched its block after the recv freed it", detectors = {ViolationKind.WRITE_INTO_FREED_BLOCK},
                cascade = {ViolationKind.DUPLICATE_TRANSFER_EVENT},
                cascadeWhy = "the offload's read of the freed block is followed by its own, second, terminal report") SAVE_READ_FREED_BLOCK,
        @Violating(value = "engine alive, but R's transfers reached the scheduler as two terminal events", detectors = {ViolationKind.DUPLICATE_TRANSFER_EVENT},
                cascade = {ViolationKind.DOUBLE_FREE_REQUEST, ViolationKind.OUTPUT_FOR_FINISHED_REQUEST},
                cascadeWhy = "without #25067/#33377 the aborted request is freed and updated again") DUPLICATE_TRANSFER_EVENT,
        @Violating(value = "a block or a delay-freed request is never released at quiescence", detectors = {ViolationKind.BLOCK_LEAK},
                cascade = {ViolationKind.DELAY_FREED_NEVER_RELEASED},
                cascadeWhy = "the block and the request's delay-freed record are left together") LEAK;
    }

    private final NixlDecodeConnector nixl;

    /** The scenario at one point of its family: {@code promptBlocks}, R's prompt in blocks (default 1). */
    public RecvAndSendForAbortedLoadScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlDecodeConnector[1], fixes, config, p.get("promptBlocks", 1, 1), p);
    }

    private RecvAndSendForAbortedLoadScenario(NixlDecodeConnector[] n, FixSet fixes, Configuration config, int blocks, Params p) {
        super(new ConnectorRig(fixes, config, 6, kv -> {
            n[0] = new NixlDecodeConnector("NixlConnector", kv, fixes);
            return List.of(n[0], new LmCacheConnector("LMCacheConnectorV1 (offload)", kv, true, fixes, config));
        }), p);
        this.nixl = n[0];
        nixl.remotePrefill(REQUEST_ID, 4 * blocks);
        rig.sendAdd(REQUEST_ID, 4 * blocks, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4, 6);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        requireSetUp(rig.request(REQUEST_ID).status() == RequestStatus.WAITING, "R should wait to be scheduled: " + rig.request(REQUEST_ID));
        actors(rig.actor("API server: client disconnects")
                        .worker("AsyncLLM.abort: ABORT(R) sent to EngineCore", () -> rig.sendAbort(REQUEST_ID))
                        .build(),
                rig.actor("EngineCore busy loop + worker")
                        .iteration()
                        .worker("NixlConnector: NIXL READ of R completes, if one was started (writes R's block)", () -> {
                            if (nixl.isPullInFlight(REQUEST_ID)) {
                                nixl.completePull(REQUEST_ID);
                            }
                        })
                        .iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.ABORTED_CLEAN).and(finished(REQUEST_ID, FINISHED_ABORTED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)),
                ending(Outcome.FINISHED_BEFORE_ABORT).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED),
                        finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
