package vllmrace.races.connector;

import java.util.List;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * #46240 (reference §3(b) hazard 4, §4 S2): nothing coordinates a pending recv with pending sends. The decode engine's
 * MultiConnector has a NIXL decode child and an LMCache child that offloads every finished request
 * ({@code request_finished} → async save). A pool of six blocks. Set-up: R (4-token prompt, max_tokens 1, remote-prefill
 * params) and R2 (local, max_tokens 6: other traffic that keeps the busy loop stepping, and so polling
 * {@code get_finished}) are in the scheduler's waiting queue. Actor 1: the client disconnects: ABORT(R) reaches
 * EngineCore's input socket. Actor 2: a busy-loop iteration (schedule allocates R's block and starts the NIXL pull: R is
 * WAITING_FOR_REMOTE_KVS), the NIXL READ of R completes, two more iterations (finished_recving(R); R promoted and run).
 *
 * <p>Run one after the other the actors are clean: an ABORT applied first finds R before any load (nothing to wait for,
 * nothing to save); applied last, it finds R's load delivered (only the save remains) or R finished. The race needs
 * the ABORT applied inside the load's window, after iteration 1 and before the iteration whose {@code get_finished}
 * carries finished_recving(R): {@code finish_requests} delay-frees R (#32255) and {@code request_finished} calls every
 * child: NIXL returns False (decode side), LMCache starts an async save and returns True. R now has two terminal
 * events coming: the recv frees R ({@code _free_blocks}, {@code del requests[R]}) while the save still reads its block;
 * the save's finished_sending then fails {@code assert req_id in self.requests}: EngineCore dead.
 */
public final class RecvAndSendForAbortedLoadScenario extends ConnectorRaceScenario {
    public static final String REQUEST_ID = "R";
    public static final String OTHER_REQUEST_ID = "R2";

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R aborted (before its load, inside its window with the fix, or after its recv) with exactly one terminal transfer event; its block freed once, after every transfer") ABORTED_CLEAN,
        @Violating("R got both finished_recving and finished_sending: the second hit assert req_id in self.requests, EngineCore dead") ENGINE_DEAD,
        @Violating("engine alive, but the offload of R touched its block after the recv freed it") SAVE_READ_FREED_BLOCK,
        @Violating("engine alive, but R's transfers reached the scheduler as two terminal events") DUPLICATE_TRANSFER_EVENT,
        @Violating("a block or a delay-freed request is never released at quiescence") LEAK,
        @Violating("any other violation or exception: a modelling error, never expected") UNEXPECTED;
    }

    private final NixlDecodeConnector nixl;

    public RecvAndSendForAbortedLoadScenario(FixSet fixes) {
        this(new NixlDecodeConnector[1], fixes);
    }

    private RecvAndSendForAbortedLoadScenario(NixlDecodeConnector[] n, FixSet fixes) {
        super(new ConnectorRig(fixes, 6, kv -> {
            n[0] = new NixlDecodeConnector("NixlConnector", kv, fixes);
            return List.of(n[0], new LmCacheConnector("LMCacheConnectorV1 (offload)", kv, true));
        }));
        this.nixl = n[0];
        nixl.remotePrefill(REQUEST_ID, 4);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4, 6);
        rig.engineCore().processInputQueue();
        rig.track(REQUEST_ID);
        rig.track(OTHER_REQUEST_ID);
        if (rig.request(REQUEST_ID).status() != RequestStatus.WAITING) {
            throw new IllegalStateException("set-up: R should wait to be scheduled: " + rig.request(REQUEST_ID));
        }
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
    public Outcome arbiter() {
        return switch (runToQuiescenceAndFind()) {
            case ENGINE_DEAD -> Outcome.ENGINE_DEAD;
            case WRITE_INTO_FREED_BLOCK -> Outcome.SAVE_READ_FREED_BLOCK;
            case DUPLICATE_TRANSFER_EVENT -> Outcome.DUPLICATE_TRANSFER_EVENT;
            case LEAK -> Outcome.LEAK;
            case UNEXPECTED -> Outcome.UNEXPECTED;
            case NONE -> rig.request(OTHER_REQUEST_ID).status() == RequestStatus.FINISHED_LENGTH_CAPPED
                    && rig.request(REQUEST_ID).status() == RequestStatus.FINISHED_ABORTED ? Outcome.ABORTED_CLEAN : Outcome.UNEXPECTED;
        };
    }
}
