package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_ABORTED;
import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.deploy.ConfigSwitch;
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
 * LookupLocksLeakOnEarlyAbort: the LMCache MP connector's lookup for R read-locks the matched chunks on the LMCache
 * server; R cannot be allocated yet, and the client aborts it: the cleanup forgets the lookup, and the locks stay until
 * their TTL.
 *
 * <p><b>Upstream.</b> Issue #44100 and PR #44101 (both open): "When a request is aborted after
 * {@code get_num_new_matched_tokens} submits a lookup but before {@code update_state_after_alloc} is called,
 * {@code _cleanup_request_tracker} is the only cleanup path. It only pops the tracker — it never calls
 * {@code cleanup_lookup_result} or {@code free_lookup_locks}. {@code _pending_lookups} retains the request_id and read
 * locks on matched KV chunks are never released until TTL expiry, blocking eviction" (client disconnects, timeouts).
 * vLLM's lmcache_mp_connector.py@474b0b8c and LMCache's own @5edba3af: the locks are released only in
 * {@code update_state_after_alloc}'s PREFETCHING branch (since #35931 for the chunks vLLM computes; the retrieve
 * releases the rest); {@code request_finished} runs {@code _cleanup_request_tracker} and {@code end_session}, which on
 * the server only refreshes LRU positions. The read-lock TTL defaults to 300 s. The fix frees the locks in the cleanup
 * when the tracker is still PREFETCHING ({@code FREE_LOOKUP_LOCKS_ON_CLEANUP}).
 *
 * <p><b>Set-up and actors.</b> The decode engine's connector is LMCache alone (in tree; LMCache's own with the
 * out-of-tree profile: the same code here); a pool of ONE block, held by R2 (a local request decoding 2 tokens). The CPU
 * cache holds R's 4-token prompt; R's ADD is applied, R waits to be scheduled. Actor 1: the client's ABORT(R). Actor 2: three
 * busy-loop iterations.
 *
 * <pre>
 *   actor 1: client                           actor 2: EngineCore busy loop
 *                                            1. schedule: R's lookup
 *                                               (maybe_submit_lookup_request: chunks read-locked); R2
 *                                               holds the block: allocate_slots fails, R waits
 *   2. ABORT(R) -> input_queue
 *                                            3. finish_requests(R): request_finished:
 *                                               _cleanup_request_tracker pops the PREFETCHING tracker;
 *                                               the locks stay on the server until their TTL
 * </pre>
 *
 * <p>Run one after the other the actors are clean: an abort applied before R's first schedule finishes R before any lookup, and an
 * abort after R was allocated finds its locks released by {@code update_state_after_alloc}.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the lookup and the abort need no step in flight.
 *
 * <p><b>Invariant</b> (SC5): every lock a request's lookup takes is released when the request ends.
 *
 * <p><b>Verdicts.</b> Reported ({@code FREE_LOOKUP_LOCKS_ON_CLEANUP} off): some interleaving leaves the locks held.
 * Fixed: never. vLLM main: racy (#44101 is open), in tree and with LMCache's own connector; there an abort after R's
 * allocation also shows SynthesizedSendForAbortedRetrieve (its own outcome: the two races' windows are adjacent).
 */
public final class LookupLocksLeakOnEarlyAbortScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R was aborted before its lookup, or after update_state_after_alloc released its locks; R ended "
                + "FINISHED_ABORTED, R2 FINISHED_LENGTH_CAPPED, every lock and block released") RELEASED,
        @Violating(value = "R was aborted while its lookup held read locks (tracker PREFETCHING): the cleanup forgot them, "
                + "held on the LMCache server until their TTL", detectors = {ViolationKind.LOOKUP_LOCKS_LEAKED}) LOCKS_LEAKED,
        @Violating(value = "not this race: R was aborted after its allocation, while its retrieve was in flight, and got a made-up "
                + "finished_sending beside its finished_recving (SynthesizedSendForAbortedRetrieve, whose closer vLLM main lacks)",
                detectors = {ViolationKind.DUPLICATE_TRANSFER_EVENT},
                cascade = {ViolationKind.LATE_TRANSFER_REPORT, ViolationKind.WRITE_INTO_FREED_BLOCK},
                cascadeWhy = "without seed 003's skip the second report kills EngineCore; a made-up send before the retrieve "
                        + "lands frees the block it writes") RETRIEVE_REPORTED_TWICE,
        @Violating(value = "not this race: R was aborted after its allocation; its made-up finished_sending freed its block "
                + "before its retrieve landed there (SynthesizedSendForAbortedRetrieve, whose closer vLLM main lacks)",
                detectors = {ViolationKind.WRITE_INTO_FREED_BLOCK},
                cascade = {ViolationKind.DUPLICATE_TRANSFER_EVENT, ViolationKind.LATE_TRANSFER_REPORT},
                cascadeWhy = "the retrieve's finished_recving follows if the engine polls again, a second terminal report for "
                        + "a removed request") RETRIEVE_INTO_FREED_BLOCK;
    }

    /** The scenario at one point of its family: {@code priorUse} only. */
    public LookupLocksLeakOnEarlyAbortScenario(FixSet fixes, Configuration config, Params p) {
        this(new LmCacheConnector[1], fixes, config, p);
    }

    private LookupLocksLeakOnEarlyAbortScenario(LmCacheConnector[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> List.of(n[0] = config.isOn(ConfigSwitch.OUT_OF_TREE_LMCACHE_MP)
                ? LmCacheConnector.outOfTree("LMCacheMPConnector", kv, false)
                : new LmCacheConnector("LMCacheMPConnector", kv, false, fixes, config))), p);
        LmCacheConnector lmcache = n[0];
        rig.sendAdd(OTHER_REQUEST_ID, 2, 2);
        rig.admit(OTHER_REQUEST_ID);
        rig.runBusyLoopOnce(); // R2 runs, holding the block
        lmcache.cachedPrefix(REQUEST_ID, 4);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.admit(REQUEST_ID); // R waits, not scheduled yet
        requireSetUp(!lmcache.holdsLookupLocks(REQUEST_ID), "R's lookup must not have started");
        Coroutine<Void> client = Coroutine.builder(rig.busyLoopEvents(), "client")
                .step("client ABORT(R) -> input socket -> input_queue", () -> rig.abortArrives(REQUEST_ID))
                .build();
        actors(client, rig.actor("EngineCore busy loop").iteration().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.RELEASED).and(finished(REQUEST_ID, FINISHED_ABORTED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
