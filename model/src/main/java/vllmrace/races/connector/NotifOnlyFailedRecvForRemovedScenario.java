package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_ABORTED;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.Ending;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;
import vllmrace.races.Violating;

/**
 * NotifOnlyFailedRecvForRemoved: R is aborted on the decode side before it is scheduled; NIXL still has to tell the
 * prefill side to free R's KV, the handshake that notification needs fails, and the worker reports a failed receive for
 * R, which the scheduler already removed: {@code assert req_id in self.requests} kills EngineCore.
 *
 * <p><b>Upstream.</b> PR #57570 ("[Bugfix][NIXL] Avoid receive reports for notification-only requests", NickLucche,
 * merged): "A notif-only decode request (abort/full prefix cache hit) can still need to notify the prefiller to release
 * KV. If that notification's handshake fails, NIXL reports a failed receive for a request the scheduler has already
 * removed, crashing EngineCore" (seen in CI). Before it ({@code nixl/pull_worker.py@0316d25} {@code start_load_kv})
 * every receive entry's metadata is stored, "always store metadata for failure recovery", the empty one
 * {@code request_finished} queues for an aborted request included; the handshake's failure callback
 * ({@code _handle_failed_transfer(req_id, None)}) queues the id in {@code _failed_recv_reqs}, and the next
 * {@code get_finished} reports it (scheduler.py@00024d31 {@code _update_from_kv_xfer_finished}: {@code assert req_id in
 * self.requests}). After it (@d80b52aa) only an entry that awaits KV or has local blocks is stored, and a failure
 * without metadata is dropped ({@code NOTIF_ONLY_NOT_RECV_TRACKED}). Seed 003's direction (3), the scheduler skipping a
 * late report ({@code SCHEDULER_SKIP_LATE_REPORT}, proposed), would close it too.
 *
 * <p><b>Set-up and actors.</b> The decode engine's connector is NIXL alone; R's prefill engine was never handshaked,
 * and its handshake fails (a block-size mismatch). R2, a local request decoding 4 tokens, is running: the engine steps,
 * and every step polls the worker (an idle engine blocks on its input queue and polls nothing). R (4-token prompt,
 * max_tokens 1, remote prefill) is added and waits to be scheduled. Actor 1: the client's ABORT(R), then the handshake thread (its failure callback). Actor 2: two
 * busy-loop iterations.
 *
 * <pre>
 *   actor 1: client + NIXL handshake thread   actor 2: EngineCore busy loop + worker get_finished
 *   1. ABORT(R) -> input queue
 *                                            2. _process_input_queue: finish_requests(R): R WAITING, never
 *                                               scheduled -> freed and removed; request_finished: do_remote_prefill
 *                                               still set -> _reqs_need_recv[R] = (R, []) (notify P only)
 *                                               start_load_kv: _recving_metadata[R] stored; no agent for P:
 *                                               _background_nixl_handshake
 *   3. handshake fails: _handle_failed_transfer
 *      (R, None): _failed_recv_reqs.put(R)
 *                                            4. get_finished: done_recving {R} (metadata there);
 *                                               _update_from_kv_xfer_finished: assert R in requests fails
 * </pre>
 *
 * <p>Scheduled first, R is a real receive: its pull waits for the same handshake, the abort delay-frees R (#32255), and
 * the failure is reported while R is still in {@code requests}: clean.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the handshake thread runs beside whatever step is in flight.
 *
 * <p><b>Invariant</b> (CN1): a transfer report names a request the scheduler holds; a notification-only entry is never
 * reported.
 *
 * <p><b>Verdicts.</b> Reported ({@code NOTIF_ONLY_NOT_RECV_TRACKED} and {@code SCHEDULER_SKIP_LATE_REPORT} off): the abort
 * before scheduling kills EngineCore. Fixed: never. vLLM main: closed, by #57570.
 */
public final class NotifOnlyFailedRecvForRemovedScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R aborted; its failed handshake reported nothing for the removed R, or failed R's pull while R was still "
                + "delay-freed in requests; R ended FINISHED_ABORTED with its blocks freed") ABORTED_CLEANLY,
        @Violating(value = "a failed receive was reported for R after the scheduler removed it: assert req_id in self.requests, "
                + "EngineCore dead", detectors = {ViolationKind.LATE_TRANSFER_REPORT}) ENGINE_DEAD;
    }

    /** R2 decodes past the actors' iterations, so the engine still steps (and polls the worker) when the arbiter runs. */
    private static final int R2_MAX_TOKENS = 4;

    private final NixlDecodeConnector nixl;

    /** The scenario at one point of its family: {@code promptBlocks} (default 1). */
    public NotifOnlyFailedRecvForRemovedScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlDecodeConnector[1], fixes, config, p);
    }

    private NotifOnlyFailedRecvForRemovedScenario(NixlDecodeConnector[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, p.get("promptBlocks", 1, 1) + 2,
                kv -> List.of(n[0] = new NixlDecodeConnector("NixlConnector", kv, fixes))), p);
        this.nixl = n[0];
        int tokens = 4 * p.get("promptBlocks", 1, 1);
        nixl.remotePrefill(REQUEST_ID, tokens);
        nixl.handshakeWillFail(REQUEST_ID);
        rig.sendAdd(OTHER_REQUEST_ID, 4, R2_MAX_TOKENS);
        rig.runBusyLoopOnce(); // R2 runs: the engine keeps stepping, and each step polls get_finished
        rig.sendAdd(REQUEST_ID, tokens, 1);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        Coroutine<Void> client = Coroutine.builder(rig.busyLoopEvents(), "client ABORT + NIXL handshake thread")
                .step("client ABORT(R) -> input socket -> input_queue", () -> rig.abortArrives(REQUEST_ID))
                .step("handshake thread: the handshake with R's prefill engine fails; _handle_failed_transfer(R, None)",
                        nixl::failPendingHandshakes)
                .build();
        actors(client, rig.actor("EngineCore busy loop").iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.ABORTED_CLEANLY).and(finished(REQUEST_ID, FINISHED_ABORTED),
                finished(OTHER_REQUEST_ID, vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED)));
    }
}
