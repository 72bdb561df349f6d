package vllmrace.races.scheduler;

import java.util.List;
import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * DelayFreedNeverReleased: the decode side delay-frees an aborted remote-KV receive until its finished_recving; the
 * prefill side never pushes, so the request stays in {@code requests} holding its blocks for ever.
 *
 * <p><b>Upstream.</b> #46283 "NixlPushConnector — decode-side KV blocks of an aborted remote-KV load are never reclaimed
 * when the prefill node never reports completion" (open, against main b80ce9dd2 with #32255); proposed fix PR #46289
 * (open): track each request aborted while WAITING_FOR_REMOTE_KVS with a reclaim deadline, sweep expired entries in
 * {@code update_from_output} through {@code _free_blocks}, the grace "kept comfortably above the connector's
 * {@code kv_lease_duration}", and ignore a finished_recving that arrives after the reclaim. The cause is #32255's delay
 * (scheduler.py@00024d31 {@code finish_requests}): {@code _update_from_kv_xfer_finished} is the only release path, and the
 * push connector's abort disarms its own registration watchdog.
 *
 * <p><b>Set-up and actors.</b> A decode-side connector ({@link SavePolicy#NEVER}). R's prompt is on the prefill instance;
 * schedule(1) allocated R's blocks and registered the receive: R is WAITING_FOR_REMOTE_KVS. The prefill side then crashed:
 * its push never comes ({@code loseLoad}). Actor 1: the client's ABORT(R). Actor 2: two busy-loop iterations.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: R WAITING_FOR_REMOTE_KVS, holding its
 *                                             blocks; the prefill side never pushes)
 *   1. ABORT(R) -> input_queue, aborts_queue
 *                                            2. _process_input_queue: finish_requests(R):
 *                                               WAITING_FOR_REMOTE_KVS, no finished_recving yet
 *                                               -> delay_free_blocks (#32255); R FINISHED_ABORTED
 *                                            3. schedule / update_from_output: no report of R
 *                                                                                          4. k more iterations: nothing
 *                                                                                             changes; R holds its blocks
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (SC5, LV2): every delay-freed request is eventually released.
 *
 * <p><b>Window.</b> None between the actors: the event R is owed never comes, so every schedule leaks; only the fix's own
 * event, the reclaim deadline, ends it.
 *
 * <p><b>Verdicts.</b> Reported ({@code RECLAIM_ABORTED_RECV} off): every interleaving shows {@code LEAKED}. Fixed (the
 * sweep frees R {@link vllmrace.model.sched.Scheduler#RECLAIM_GRACE_STEPS} steps after the abort, after the lease):
 * never. vLLM main: racy (#46289 is open).
 */
public final class DelayFreedNeverReleasedScenario extends SchedulerRaceScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("R aborted; after the grace period the sweep freed its blocks once, and nothing wrote into them after") RECLAIMED,
        @Violating(value = "R aborted while waiting for a push that never comes: it stays FINISHED_ABORTED in requests holding its "
                + "blocks for ever (LV2)", detectors = {ViolationKind.REQUEST_LEAKED}) LEAKED;
    }

    /** The scenario at one point of its family (see the race's grid): {@code promptBlocks} (default 1). */
    public DelayFreedNeverReleasedScenario(FixSet fixes, Configuration config, Params p) {
        this(fixes, config, p.get("promptBlocks", 1, 1), p);
    }

    private DelayFreedNeverReleasedScenario(FixSet fixes, Configuration config, int blocks, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.NEVER, 4 * blocks), p);
        rig.connector().remotePrefill(REQUEST_ID, 4 * blocks);
        rig.sendAdd(REQUEST_ID, 4 * blocks, 1);
        rig.runBusyLoopOnce(); // ADD applied; schedule(1) allocates R's blocks and registers the receive
        rig.track(REQUEST_ID);
        requireSetUp(rig.request(REQUEST_ID).status() == RequestStatus.WAITING_FOR_REMOTE_KVS,
                "R was expected WAITING_FOR_REMOTE_KVS, is " + rig.request(REQUEST_ID));
        rig.connector().loseLoad(REQUEST_ID); // the prefill side crashed: no push, no finished_recving
        actors(rig.clientAbort(REQUEST_ID), rig.busyLoop().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.RECLAIMED).and(finished(REQUEST_ID, FINISHED_ABORTED)));
    }
}
