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
 * LateLoadCompletionUnion: MultiConnector unions finished_recving without dedup; the faster of two async loads completes
 * the request, the late NIXL completion is reported for a removed (or running) request: assert, engine dead.
 *
 * <p><b>Upstream.</b> Seed 003, issue #53049 (open): {@code MultiConnector.get_finished} unions finished_recving across
 * children without dedup ({@code finished_recving.update(recving or ())}), while it dedups sends by
 * {@code _extra_async_saves}. The report proposes three directions: (1) dedup loads in MultiConnector (PRs #51595,
 * #50546, #51864, #42841, open), (2) NIXL pins the pull's blocks, (3) the scheduler skips late reports (#53746 closed,
 * others open). None is merged.
 *
 * <p>The second load needs an LMCache child that loads without being chosen. Upstream's MultiConnector chooses one
 * child to load (the first with a non-zero match) and since #46865 (merged) gives the others the real blocks with
 * {@code num_external_tokens = 0} as the "do not load" signal (before it, empty blocks: nothing to load into). vLLM's
 * in-tree LMCache MP connector honours the signal since #47505 (merged: {@code condition = tracker.needs_retrieve() and
 * num_external_tokens > 0}); LMCache's own out-of-tree MP connector did not until its guard (LMCache #4028 open for the
 * older variants), nor does a child of vllm-ascend's MultiConnector before its #13668 (open). The bare union of
 * {@code finished_recving} (#53049) is on main either way: it kills the engine as soon as a child breaks the contract.
 *
 * <p><b>Set-up and actors.</b> One scenario for LateLoadCompletionUnion and its aggravating factor PullIntoFreedBlocks.
 * The decode engine's MultiConnector has a NIXL decode child (first in config, so chosen) and an LMCache child (not
 * chosen; it loads only when it ignores {@code num_external_tokens = 0}: before #47505, or out of tree). A pool of ONE block. R (4-token prompt, max_tokens 1; at {@code stopToken} 1 a 3-token prompt and max_tokens
 * 2, so its decode step fits in its block and nothing is preempted) has remote-prefill params AND an LMCache prefix hit;
 * R2 (local) waits for a block. One busy-loop iteration: schedule(1) allocates R's block B;
 * {@code update_state_after_alloc} gives NIXL B and the tokens, the LMCache child B and 0, and both the NIXL pull and the
 * LMCache load start into B; R is WAITING_FOR_REMOTE_KVS. Actor 1: the worker: the LMCache load of R completes (fast, CPU memory); four polls find the
 * NIXL pull still in flight; then the NIXL pull completes (slow, GB-scale over TCP). Actor 2: four busy-loop iterations
 * (finished_recving(R), R promoted, R runs and finishes, B freed, R2 gets B).
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
 * <p>Run one after the other the actors are clean: both completions reach one {@code get_finished} (the union collapses
 * them) or none arrives before R could run. Only an interleaving lets R finish between the two completions.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (CN1): each request's load completion reaches the scheduler exactly once. A late report landing
 * while R runs fails {@code assert RequestStatus.is_finished} instead: also engine death.
 *
 * <p><b>Verdicts.</b> Reported ({@code MULTI_CONNECTOR_LOAD_DEDUP}, {@code LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN} and
 * {@code SCHEDULER_SKIP_LATE_REPORT} off; {@code NIXL_PIN_PULL_BLOCKS} alone does not close it): some interleaving shows
 * {@code ENGINE_DEAD}. Fixed: never. vLLM main: closed, by #47505 (the in-tree LMCache child does not load; none of
 * #53049's directions is merged). vLLM main + out-of-tree LMCache MP: racy (the child loads without being chosen).
 */
public final class LateLoadCompletionUnionScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R loaded (once), ran and finished; B freed only when nothing wrote it; R2 ran; one recv per request") COMPLETED,
        @Violating(value = "a late finished_recving(R) hit an upstream assert (req_id in self.requests / is_finished): EngineCore dead", detectors = {ViolationKind.DUPLICATE_TRANSFER_EVENT, ViolationKind.LATE_TRANSFER_REPORT},
                cascade = {ViolationKind.WRITE_INTO_FREED_BLOCK},
                cascadeWhy = "PullIntoFreedBlocks: the second load may write the blocks the first report's free released before its own report kills the engine") ENGINE_DEAD,
        @Violating(value = "engine alive, but the NIXL pull wrote B after B was freed (and maybe given to R2)", detectors = {ViolationKind.DUPLICATE_TRANSFER_EVENT, ViolationKind.WRITE_INTO_FREED_BLOCK}) PULL_WROTE_FREED_BLOCK,
        @Violating(value = "engine alive, no bad write, but R's transfer completion reached the scheduler twice", detectors = {ViolationKind.DUPLICATE_TRANSFER_EVENT}) DUPLICATE_TRANSFER_EVENT,
        @Violating(value = "a block or a delay-freed request is never released at quiescence", detectors = {ViolationKind.BLOCK_LEAK},
                cascade = {ViolationKind.DELAY_FREED_NEVER_RELEASED, ViolationKind.DUPLICATE_TRANSFER_EVENT},
                cascadeWhy = "a lost report leaves the request's blocks, and its delay-freed record, behind") LEAK;
    }

    private final NixlDecodeConnector nixl;
    private final LmCacheConnector lmcache;
    private final boolean stopToken;

    /**
     * The scenario at one point of its family: {@code promptBlocks}, R's and R2's prompt in blocks, and the pool's size
     * (default 1); {@code stopToken} (1: R finishes by a stop token, FINISHED_STOPPED, instead of by length).
     */
    public LateLoadCompletionUnionScenario(FixSet fixes, Configuration config, Params p) {
        this(new Object[2], fixes, config, p.get("promptBlocks", 1, 1), p.get("stopToken", 0, 0) == 1, p);
    }

    private LateLoadCompletionUnionScenario(Object[] c, FixSet fixes, Configuration config, int blocks, boolean stopToken, Params p) {
        super(new ConnectorRig(fixes, config, blocks, kv -> {
            NixlDecodeConnector n = new NixlDecodeConnector("NixlConnector", kv, fixes);
            LmCacheConnector l = new LmCacheConnector("LMCacheMPConnector", kv, false, fixes, config);
            c[0] = n;
            c[1] = l;
            return List.of(n, l);
        }), p);
        this.stopToken = stopToken;
        this.nixl = (NixlDecodeConnector) c[0];
        this.lmcache = (LmCacheConnector) c[1];
        // with max_tokens 2 R's prompt is one token short of its blocks, so its decode step fits in them: a decode needing a
        // second block in this one-block pool would preempt R itself (_preempt_request frees B with the pull in flight, and
        // no request_finished runs), a path the race's fixes do not address
        int promptTokens = stopToken ? 4 * blocks - 1 : 4 * blocks;
        nixl.remotePrefill(REQUEST_ID, promptTokens);
        lmcache.cachedPrefix(REQUEST_ID, promptTokens);
        rig.sendAdd(REQUEST_ID, promptTokens, stopToken ? 2 : 1, stopToken ? 1 : 0);
        rig.sendAdd(OTHER_REQUEST_ID, 4 * blocks, 1);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        rig.runBusyLoopOnce();
        requireSetUp(nixl.isPullInFlight(REQUEST_ID) && rig.request(REQUEST_ID).status() == RequestStatus.WAITING_FOR_REMOTE_KVS,
                "R's pull did not start: " + rig.request(REQUEST_ID));
        actors(rig.actor("Worker: async loads")
                        .worker("LMCacheMPConnector: load of R from the CPU cache completes (writes B), if it started one", () -> {
                            if (lmcache.hasUnreportedLoad(REQUEST_ID)) {
                                lmcache.completeLoad(REQUEST_ID); // not chosen: only a child that ignores num_external_tokens == 0 loads
                            }
                        })
                        .worker("NixlConnector worker: polls the NIXL READ of R, still in flight", () -> nixl.isPullInFlight(REQUEST_ID))
                        .worker("NixlConnector worker: polls the NIXL READ of R, still in flight", () -> nixl.isPullInFlight(REQUEST_ID))
                        .worker("NixlConnector worker: polls the NIXL READ of R, still in flight", () -> nixl.isPullInFlight(REQUEST_ID))
                        .worker("NixlConnector worker: polls the NIXL READ of R, still in flight", () -> nixl.isPullInFlight(REQUEST_ID))
                        .worker("NixlConnector: NIXL READ of R completes (writes B)", () -> nixl.completePull(REQUEST_ID))
                        .build(),
                rig.actor("EngineCore busy loop").iteration().iteration().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.COMPLETED).and(finished(REQUEST_ID, stopToken ? FINISHED_STOPPED : FINISHED_LENGTH_CAPPED),
                finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
