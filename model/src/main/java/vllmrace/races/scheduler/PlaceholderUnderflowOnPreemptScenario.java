package vllmrace.races.scheduler;

import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import java.util.List;
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
 * PlaceholderUnderflowOnPreempt: a request preempted while its output is in flight is resumed before that output
 * returns; the stale output drains the placeholder the resume step needed, and a later drain takes
 * {@code num_output_placeholders} below zero: the async scheduler's assert kills EngineCore.
 *
 * <p><b>Upstream.</b> PR #48245 "[BugFix] Fix {@code num_output_placeholders} preemption underflow" (njhill, merged;
 * reworks #47900; family #46066, #45430; #42492 is the request-id twin): "An async decode step reserves
 * {@code num_output_placeholders} ... before its output returns. When the next {@code schedule()} preempts the request under
 * KV pressure, {@code _preempt_request} rolls it back ({@code num_computed_tokens = 0}), but the stale in-flight output still
 * returns and drains against the reset counters → {@code num_output_placeholders} underflows", "most visible with spec
 * decode / PP". At scheduler.py@00024d31 {@code _preempt_request} leaves the placeholders as they are, so with one older
 * step in flight (batch queue 2) the stale return balances them (the #47900 thread: "a single preempt→return cycle balances
 * and never goes negative"). With a deeper pipeline (here a batch queue of 3) the request can be resumed before its stale
 * output returns; the resume is classed a prefill chunk ({@code num_computed_tokens < num_tokens + num_output_placeholders},
 * the stale placeholder still counted), so {@code AsyncScheduler._update_after_schedule} reserves nothing for it, yet it
 * samples (an inference from the code paths, not a line upstream states). #48245 marks the in-flight output stale
 * ({@code num_stale_output_tokens = num_in_flight_tokens}, placeholders zeroed), delivers it without decrementing
 * ({@code is_stale}), and holds a resume back while deliverable stale output is in flight.
 *
 * <p><b>Set-up and actors.</b> A prefill-side connector ({@link SavePolicy#ON_SUCCESS}, a KV producer: #45357's deferred
 * frees, for KV consumers only, do not apply and a preemption frees at once), a batch queue of 3, a pool holding
 * exactly C, A and R (one block each at the default point). C (2-token prompt, max_tokens 2), A (4-token prompt,
 * max_tokens 3) and R (4-token prompt, max_tokens 3) were admitted in that order and schedule(1) ran all three (one
 * placeholder each). Actor 1: the client's ABORT(C) reaches the input thread. Actor 2: four busy-loop iterations.
 *
 * <pre>
 *   actor 1: client ABORT(C)                 actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: schedule(1) ran C, A and R)
 *   1. ABORT(C) -> input_queue
 *                                            2. _process_input_queue: C aborted, its block free
 *                                            3. schedule(2): A's decode takes C's block; R's decode
 *                                               needs one too, none is free: R preempts itself
 *                                               (running.pop()), its step-1 placeholder stays counted
 *                                            4-6. schedule(3), before update(1): R resumed into its
 *                                               freed block, a "prefill chunk" (the stale placeholder
 *                                               counts), so no placeholder reserved; update(1): the
 *                                               stale token drains R's placeholder to 0
 *                                            7-9. schedule(4): R's decode needs a second block, none
 *                                               free: R preempts itself again; update(2)
 *                                            10-12. schedule(5): R cannot resume yet; update(3):
 *                                               R's resume token drains num_output_placeholders
 *                                               to -1: assert, EngineCore dies
 * </pre>
 *
 * <p><b>Scheduler.</b> AsyncScheduler only: the sync {@code Scheduler} reserves no output placeholders, so every
 * interleaving is clean with it. vLLM main, sync scheduling: does not occur.
 *
 * <p><b>Invariant</b> (SC6): {@code num_output_placeholders}, the sampling positions dispatched but not yet delivered, is
 * never negative.
 *
 * <p><b>Window.</b> The order of two events: C's block freed before schedule(3), the step that runs before R's stale
 * output returns, or after it. Before schedule(2), R's own decode preempts R; between schedule(2) and schedule(3), A's
 * decode does; either way schedule(3) finds a block and resumes R too early. Applied later (at the latest just before
 * update(1), with #29987's aborts_queue), it leaves no block for R until its stale output has returned, so the resume
 * reserves its placeholder and the count balances.
 *
 * <p><b>Verdicts.</b> Reported ({@code STALE_OUTPUT_AFTER_PREEMPT} off): an ABORT applied before schedule(3) shows
 * {@code PLACEHOLDER_UNDERFLOW}. Fixed (the stale output drains its own share, placeholders zeroed, R resumes after it):
 * never. vLLM main: closed, by #48245.
 */
public final class PlaceholderUnderflowOnPreemptScenario extends SchedulerRaceScenario {
    public static final String PRESSURE = "A";
    public static final String ABORTED = "C";
    /** A deeper pipeline than async scheduling's 2 (pipeline parallelism): two older steps in flight at each schedule(). */
    public static final int BATCH_QUEUE_SIZE = 3;

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("no placeholder count went negative: C aborted (or done before its ABORT came), A and R ran to their "
                + "length, everything freed") COMPLETED,
        @Violating(value = "R, resumed before its stale output returned, later drained num_output_placeholders below zero: "
                + "AsyncScheduler's assert fails, EngineCore dies (SC6)", detectors = {ViolationKind.OUTPUT_PLACEHOLDER_UNDERFLOW}) PLACEHOLDER_UNDERFLOW;
    }

    /** The scenario at one point of its family: {@code promptBlocks} (A's and R's prompts in blocks, default 1; the pool grows). */
    public PlaceholderUnderflowOnPreemptScenario(FixSet fixes, Configuration config, Params p) {
        this(fixes, config, p.get("promptBlocks", 1, 1), p);
    }

    private PlaceholderUnderflowOnPreemptScenario(FixSet fixes, Configuration config, int blocks, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.ON_SUCCESS, 1 + 2 * blocks, BATCH_QUEUE_SIZE), p);
        int bs = EngineCoreRig.BLOCK_SIZE;
        rig.sendAdd(ABORTED, 2, 2);
        rig.sendAdd(PRESSURE, blocks * bs, 3);
        rig.sendAdd(REQUEST_ID, blocks * bs, 3);
        rig.dispatchStep(); // ADDs applied; schedule(1) runs C, A and R, in flight
        rig.trackAll(ABORTED, PRESSURE, REQUEST_ID);
        requireSetUp(rig.blockPool().numFreeBlocks() == 0 && rig.scheduler().runningSnapshot().size() == 3,
                "C, A and R were expected running in a full pool, free " + rig.blockPool().numFreeBlocks() + ", running "
                        + rig.scheduler().runningSnapshot());
        actors(rig.clientAbort(ABORTED), rig.busyLoop().finishStepInFlight().iteration().iteration().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.COMPLETED).and(finished(ABORTED, FINISHED_ABORTED, FINISHED_LENGTH_CAPPED),
                        finished(PRESSURE, FINISHED_LENGTH_CAPPED), finished(REQUEST_ID, FINISHED_LENGTH_CAPPED))
                .and("A and R each got their 3 output tokens", () -> rig.request(PRESSURE).numOutputTokens() == 3
                        && rig.request(REQUEST_ID).numOutputTokens() == 3));
    }
}
