package vllmrace.races.scheduler;

import java.util.List;
import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import java.util.Set;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * AbortedLoadLeak: an abort after finished_recving already arrived: a naive delay flag waits for a completion that never
 * comes, and the blocks leak.
 *
 * <p><b>Upstream.</b> The leak the review of PR #32255 found (cursor bot, "KV blocks never freed if abort races with
 * finished_recving"), fixed in the merged code; lifecycle §2(c)(iii), K1-K2. #32255 delays the free of an aborted
 * WAITING_FOR_REMOTE_KVS request until its {@code finished_recving}. But that report may already have arrived: the id
 * sits in {@code finished_recving_kv_req_ids} until the next {@code schedule()} promotes the request. An ABORT in that
 * window waits for a report that never comes.
 *
 * <p><b>Set-up and actors.</b> A decode-side NIXL connector ({@link SavePolicy#NEVER}). R (its prompt on a remote
 * prefill instance) was scheduled, its async load started and landed; iteration 2 ran schedule(2) (R not yet ready).
 * Actor 1: the client's ABORT(R) arrives. Actor 2: update_from_output(2) brings finished_recving(R) (R joins
 * finished_recving_kv_req_ids); iteration 3: {@code _process_input_queue}, schedule(3) promotes R.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: R's async load started and landed)
 *                                            1. update_from_output(2): finished_recving(R)
 *                                               -> finished_recving_kv_req_ids += R
 *   2. ABORT(R) -> input_queue, aborts_queue
 *                                            3. _process_input_queue: finish_requests(R)
 *                                               naive flag: delay_free_blocks = True
 *                                            4. schedule(3): nothing to promote
 *                                                                                          5. quiescence: R still in
 *                                                                                             requests, blocks held
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (SC5): every delay-freed request has exactly one future event that frees it.
 *
 * <p><b>Verdicts.</b> Reported ({@code DELAY_FREE_UNLESS_RECVED} off: the PR's first, naive flag): some interleaving shows
 * {@code LEAK}. Fixed (no delay when the recv already arrived): never. vLLM main: closed, by the #32255 review's
 * refinement.
 */
public final class AbortedLoadLeakScenario extends SchedulerRaceScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("R aborted (waiting for its recv, after it, or running); its blocks freed exactly once") ABORTED,
        @Clean("R finished normally before its ABORT was applied (the sync Scheduler processed its step in the same "
                + "busy-loop iteration); the abort was a no-op, its blocks freed once") FINISHED_BEFORE_ABORT,
        @Violating(value = "R aborted after its finished_recving arrived, free delayed for a report that never comes: "
                + "R stays in requests holding its blocks (SC5)", detectors = {ViolationKind.DELAY_FREED_NEVER_RELEASED, ViolationKind.BLOCK_LEAK}) LEAK;
    }

    /** The scenario at one point of its family (see the race's grid). */
    public AbortedLoadLeakScenario(FixSet fixes, Configuration config, Params p) {
        this(fixes, config, p.get("promptBlocks", 1, 1), p);
    }

    /** R's prompt fills {@code blocks} blocks. */
    private AbortedLoadLeakScenario(FixSet fixes, Configuration config, int blocks, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.NEVER, 4 * blocks), p);
        rig.connector().remotePrefill(REQUEST_ID, 4 * blocks);
        rig.sendAdd(REQUEST_ID, 4 * blocks, 1);
        rig.runBusyLoopOnce(); // ADD applied; schedule(1) starts the async load; update_from_output(1)
        rig.track(REQUEST_ID);
        rig.connector().completeLoad(REQUEST_ID); // the worker's load lands; reported by the next get_finished
        rig.engineCore().processInputQueue();
        // schedule(2): R not ready yet; nothing runs, so the loop blocks
        requireSetUp(rig.engineCore().scheduleBatch(), "schedule(2) was expected to block on step 2");
        actors(rig.clientAbort(REQUEST_ID), rig.busyLoop().processOldestBatch().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.ABORTED).and(finished(REQUEST_ID, FINISHED_ABORTED)),
                ending(Outcome.FINISHED_BEFORE_ABORT).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
