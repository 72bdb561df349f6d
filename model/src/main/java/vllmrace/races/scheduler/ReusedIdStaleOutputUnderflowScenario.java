package vllmrace.races.scheduler;

import java.util.List;
import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * ReusedIdStaleOutputUnderflow: a request is cancelled and resubmitted under the same id while its step is in flight;
 * update_from_output of that step finds the new request under the id and drains its output placeholders below zero.
 *
 * <p><b>Upstream.</b> #42492 (cancel and resubmit under a reused id ends in the async scheduler's placeholder assert; the
 * issue names it with the #48245 family). Rediscovered by this suite's race hunt with every fix off (`./catalogue --hunt
 * --fixes none`, seed 20261201, scenario 46, shrunk to this shape). {@code Scheduler.update_from_output}
 * (scheduler.py@00024d31) looks each scheduled id up in {@code self.requests} and skips only {@code None} or a finished
 * request; {@code AsyncScheduler._update_request_with_output} then decrements {@code num_output_placeholders} and asserts
 * it non-negative. A request re-added under the id of one aborted while its step ran is neither: it receives the aborted
 * request's token with no placeholder of its own. #27987's unique internal ids make the two requests two ids (undone by
 * {@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1}, #34415).
 *
 * <p><b>Set-up and actors.</b> No KV hand-off; a pool of 3 blocks. A (8-token prompt, max_tokens 2) and B (the same, so it
 * waits for blocks) were added; schedule(1) ran A's prefill, with a placeholder for its token. Actor 1: the client cancels
 * A (ABORT(A)) and resubmits it (ADD(A) again). Actor 2: a busy-loop iteration.
 *
 * <pre>
 *   actor 1: client                          actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: schedule(1) ran A, one placeholder)
 *   1. ABORT(A) -> input_queue
 *   2. ADD(A) again -> input_queue
 *                                            3. _process_input_queue: ABORT finishes A@1;
 *                                               ADD adds A@3 under the same id
 *                                            4. schedule(2) [B]
 *                                            5. update_from_output(1): requests["A"] is A@3,
 *                                               not finished: its placeholders 0 -> -1, assert
 *                                               (engine dead)
 * </pre>
 *
 * <p><b>Scheduler.</b> AsyncScheduler only: the underflow is of the AsyncScheduler's output placeholders; with the sync
 * {@code Scheduler} every interleaving is clean. vLLM main, sync scheduling: does not occur.
 *
 * <p><b>Invariant</b> (SC6): {@code num_output_placeholders >= 0}: a step's output is applied only to the request it was
 * scheduled for.
 *
 * <p><b>Window.</b> Both sequential orders show it: whichever step of A is in flight when the cancel and the resubmit are
 * applied (step 1, or the decode step 2 when the loop ran first) delivers its token to the resubmitted A. Only an
 * interleaving that lands them right after A's last output avoids it.
 *
 * <p><b>Verdicts.</b> Reported ({@code UNIQUE_INTERNAL_IDS} off): {@code STALE_OUTPUT_ON_READDED}. Fixed: never. vLLM main:
 * closed, by #27987. vLLM main, ids not randomized: racy
 * ({@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1}, #34415: {@code assign_request_id} keeps the client's id, so #27987's
 * suffix is not there to tell the two requests apart); there, some interleavings end instead in DoubleAbortApplication's
 * FE2 (the ABORT's aborts_queue copy finishes the resubmitted A), declared as {@code READD_KILLED_BY_ABORT_COPY}.
 */
public final class ReusedIdStaleOutputUnderflowScenario extends SchedulerRaceScenario {
    /** The client's id, sent twice: the engine ids of its two ADDs come from it. */
    public static final String CLIENT_ID = "A";
    public static final String OTHER = "B";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("A@1 aborted (or done) before the resubmit landed, or its output came first; the resubmitted A ran to its length") READD_RUNS,
        @Violating(value = "update_from_output(1) applied A@1's token to the resubmitted A under the same id: num_output_placeholders "
                + "< 0, assert, engine dead (SC6)", detectors = {ViolationKind.OUTPUT_PLACEHOLDER_UNDERFLOW}) STALE_OUTPUT_ON_READDED,
        /**
         * A cascade, declared: with ids not randomized and #29987's aborts_queue copy applied again (the suite's
         * ABORT_APPLIED_ONCE is a proposal, off on vLLM main), this scenario's steps also reach DoubleAbortApplication.
         */
        @Violating(value = "ABORT(A@1), applied again from aborts_queue, finishes the resubmitted A under the same id (FE2): "
                + "DoubleAbortApplication's race, reached by these steps on vLLM main with ids not randomized", detectors = {ViolationKind.ABORT_HIT_WRONG_REQUEST}) READD_KILLED_BY_ABORT_COPY;
    }

    private final EngineCoreRig.Resubmission ids;

    /** The scenario at one point of its family: {@code maxTokens} of A and B (default 2). */
    public ReusedIdStaleOutputUnderflowScenario(FixSet fixes, Configuration config, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.NEVER, 3), p);
        int maxTokens = p.get("maxTokens", 2, 2);
        ids = rig.resubmission(CLIENT_ID);
        rig.sendAdd(ids.first(), 2 * EngineCoreRig.BLOCK_SIZE, maxTokens);
        rig.sendAdd(OTHER, 2 * EngineCoreRig.BLOCK_SIZE, maxTokens);
        rig.dispatchStep(); // both added; schedule(1) runs A's prefill (B waits for blocks), in flight
        rig.track(ids.first());
        actors(rig.clientAbortThenResubmit("client: cancel A, resubmit A", ids, 2 * EngineCoreRig.BLOCK_SIZE, maxTokens),
                rig.busyLoop().finishStepInFlight().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.READD_RUNS).and(status(ids.first(), FINISHED_ABORTED, FINISHED_LENGTH_CAPPED))
                .and("the re-added " + ids.second() + " ran to its length (the last finish reason under its id)",
                        () -> rig.finishReasons(ids.second()) != null && rig.finishReasons(ids.second()).endsWith("length")));
    }
}
