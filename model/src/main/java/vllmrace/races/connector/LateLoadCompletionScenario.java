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
 * Seed 003: LateLoadCompletionUnion and its aggravating factor PullIntoFreedBlocks, one scenario. The decode engine's
 * MultiConnector has a NIXL decode child (first in config, so chosen) and an LMCache child (loads only here). A pool
 * of ONE block. Set-up: R (4-token prompt, max_tokens 1) has remote-prefill params AND an LMCache prefix hit; R2 (local)
 * waits for a block. One busy-loop iteration: schedule(1) allocates R's block B; {@code update_state_after_alloc} is
 * broadcast, so both the NIXL pull and the LMCache load start into B; R is WAITING_FOR_REMOTE_KVS.
 * Actor 1: the worker: the LMCache load of R completes (fast, CPU memory); four polls find the NIXL pull still in
 * flight; then the NIXL pull of R completes (slow, GB-scale over TCP). Actor 2: four busy-loop iterations (finished_recving(R) → R promoted → R runs and finishes → B freed →
 * R2 gets B). Run one after the other, the actors are clean: both completions reach the same {@code get_finished}
 * (the union collapses them) or none arrives before R could run. Only a real interleaving lets R finish between the
 * two completions.
 *
 * <p>The race: the pull lands after R finished: it writes B, now free or R2's (PullIntoFreedBlocks, SC4), and the
 * union reports finished_recving(R) a second time, for a removed request: {@code assert req_id in self.requests}
 * (LateLoadCompletionUnion, CN1), EngineCore dead.
 */
public final class LateLoadCompletionScenario extends ConnectorRaceScenario {
    public static final String REQUEST_ID = "R";
    public static final String OTHER_REQUEST_ID = "R2";

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R loaded (once), ran and finished; B freed only when nothing wrote it; R2 ran; one recv per request") COMPLETED,
        @Violating("a late finished_recving(R) hit an upstream assert (req_id in self.requests / is_finished): EngineCore dead") ENGINE_DEAD,
        @Violating("engine alive, but the NIXL pull wrote B after B was freed (and maybe given to R2)") PULL_WROTE_FREED_BLOCK,
        @Violating("engine alive, no bad write, but R's transfer completion reached the scheduler twice") DUPLICATE_TRANSFER_EVENT,
        @Violating("a block or a delay-freed request is never released at quiescence") LEAK,
        @Violating("any other violation or exception: a modelling error, never expected") UNEXPECTED;
    }

    private final NixlDecodeConnector nixl;
    private final LmCacheConnector lmcache;

    public LateLoadCompletionScenario(FixSet fixes) {
        this(new Object[2], fixes);
    }

    private LateLoadCompletionScenario(Object[] c, FixSet fixes) {
        super(new ConnectorRig(fixes, 1, kv -> {
            NixlDecodeConnector n = new NixlDecodeConnector("NixlConnector", kv, fixes);
            LmCacheConnector l = new LmCacheConnector("LMCacheMPConnector", kv, false);
            c[0] = n;
            c[1] = l;
            return List.of(n, l);
        }));
        this.nixl = (NixlDecodeConnector) c[0];
        this.lmcache = (LmCacheConnector) c[1];
        nixl.remotePrefill(REQUEST_ID, 4);
        lmcache.cachedPrefix(REQUEST_ID, 4);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4, 1);
        rig.engineCore().processInputQueue();
        rig.track(REQUEST_ID);
        rig.track(OTHER_REQUEST_ID);
        rig.runBusyLoopOnce();
        if (!nixl.isPullInFlight(REQUEST_ID) || rig.request(REQUEST_ID).status() != RequestStatus.WAITING_FOR_REMOTE_KVS) {
            throw new IllegalStateException("set-up: R's pull did not start: " + rig.request(REQUEST_ID));
        }
        actors(rig.actor("Worker: async loads")
                        .worker("LMCacheMPConnector: load of R from the CPU cache completes (writes B)", () -> lmcache.completeLoad(REQUEST_ID))
                        .worker("NixlConnector worker: polls the NIXL READ of R, still in flight", () -> nixl.isPullInFlight(REQUEST_ID))
                        .worker("NixlConnector worker: polls the NIXL READ of R, still in flight", () -> nixl.isPullInFlight(REQUEST_ID))
                        .worker("NixlConnector worker: polls the NIXL READ of R, still in flight", () -> nixl.isPullInFlight(REQUEST_ID))
                        .worker("NixlConnector worker: polls the NIXL READ of R, still in flight", () -> nixl.isPullInFlight(REQUEST_ID))
                        .worker("NixlConnector: NIXL READ of R completes (writes B)", () -> nixl.completePull(REQUEST_ID))
                        .build(),
                rig.actor("EngineCore busy loop").iteration().iteration().iteration().iteration().build());
    }

    @Override
    public Outcome arbiter() {
        return switch (runToQuiescenceAndFind()) {
            case ENGINE_DEAD -> Outcome.ENGINE_DEAD;
            case WRITE_INTO_FREED_BLOCK -> Outcome.PULL_WROTE_FREED_BLOCK;
            case DUPLICATE_TRANSFER_EVENT -> Outcome.DUPLICATE_TRANSFER_EVENT;
            case LEAK -> Outcome.LEAK;
            case UNEXPECTED -> Outcome.UNEXPECTED;
            case NONE -> rig.request(REQUEST_ID).status() == RequestStatus.FINISHED_LENGTH_CAPPED
                    && rig.request(OTHER_REQUEST_ID).status() == RequestStatus.FINISHED_LENGTH_CAPPED ? Outcome.COMPLETED : Outcome.UNEXPECTED;
        };
    }
}
