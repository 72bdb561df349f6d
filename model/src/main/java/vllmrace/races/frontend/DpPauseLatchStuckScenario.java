package vllmrace.races.frontend;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.dp.DpDeployment;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.Ending;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * DpPauseLatchStuck: the data-parallel ranks have paused by consensus and ignore {@code START_DP_WAVE}; a late request's
 * FIRST_REQ makes the coordinator set {@code engines_running = True} as it forwards the wake; no rank steps, no
 * {@code wave_complete} ever comes, and {@code wait_for_requests_to_drain} never returns.
 *
 * <p><b>Upstream.</b> PR #51481 (merged, 2026-08; part 1 of RFC #51476), "[Bugfix][DP] Don't assume the engines started
 * when forwarding a wake": "True is a prediction. False is an observation." vllm/v1/engine/coordinator.py@de4c1fcb, the
 * front-end wake: {@code if not self.engines_running: ... self.engines_running = True; self._send_start_wave(publish_back,
 * self.current_wave, engine_to_exclude)}; {@code wave_complete} is the only way back to False. With #39366's two-phase pause
 * (merged) every rank sets {@code ignore_start_dp_wave} at pause consensus, and a request that arrives while paused is held
 * ({@code PAUSED_NEW}) and not counted as unfinished. {@code AsyncLLM.wait_for_requests_to_drain} polls
 * {@code dp_engines_running()}, the coordinator's published flag, once a second until its timeout. With the PR the
 * coordinator still broadcasts START but leaves the flag to an engine's {@code start_wave} report
 * ({@code DP_WAKE_DOES_NOT_ASSUME_RUNNING}).
 *
 * <p><b>Set-up and actors.</b> Two DP ranks and the coordinator idle at wave 0; the client routes requests to rank 1.
 * Actor 1: {@code pause_generation(mode="abort")} ({@code pause_scheduler} on both ranks), then the ranks' busy-loop
 * iteration that reaches pause consensus and completes the wave. Actor 2: a late {@code add_request(X)} (ADD to rank 1,
 * FIRST_REQ through the stats task to the coordinator). Arbiter: the ranks run until none steps, the coordinator
 * publishes, LV3; then {@code resume_generation} and the held request runs.
 *
 * <pre>
 *   actor 1: pause, ranks                          actor 2: late request
 *   1. pause_scheduler(abort) on ranks 0 and 1:
 *      pending_pause, engines_running
 *   2. ranks step: sync_dp_state -> consensus:
 *      ignore_start_dp_wave; wave_complete(0)
 *      -> coordinator: wave 1, engines_running False
 *                                                  3. ADD(X) to rank 1: held (PAUSED_NEW)
 *                                                     FIRST_REQ -> coordinator: engines_running = True,
 *                                                     START_DP_WAVE(1, exclude rank 1)
 *   arbiter: both ranks ignore START; nothing steps; the coordinator publishes True for ever
 * </pre>
 *
 * <p>The request first, the pause aborts it and the consensus iteration reports {@code wave_complete}, which sets the
 * flag back to False; the window is the wake landing after the wave that the pause completed.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: its window is in the DP coordination, whatever the number of
 * batches in flight.
 *
 * <p><b>Yields.</b> It needs no yield inside a frontend coroutine: the client's ADD and FIRST_REQ go out in one step; the
 * window is between the pause's wave and the coordinator's handling of the wake, other processes.
 *
 * <p><b>Invariant</b> (LV3 of lifecycle §5): the coordinator's {@code engines_running} is False once no rank steps, so
 * {@code wait_for_requests_to_drain} returns.
 *
 * <p><b>Verdicts.</b> Reported ({@code DP_WAKE_DOES_NOT_ASSUME_RUNNING} off, #39366's pause on): the pause first, the
 * flag stays True. Fixed: never. vLLM main: closed, by #51481. Limits: one request token long (a {@code maxTokens} point
 * runs longer), ranks in lockstep, pause mode "abort" only; upstream the drain raises {@code TimeoutError} after
 * {@code drain_timeout} (300 s) rather than hanging.
 */
public final class DpPauseLatchStuckScenario extends DpScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("the coordinator's engines_running went back to False once no rank stepped: the drain returns; the late "
                + "request ran after resume") DRAINED,
        @Violating(value = "the coordinator set engines_running = True forwarding the late request's wake to ranks that ignore "
                + "START: no rank steps, no wave_complete, and wait_for_requests_to_drain never returns",
                detectors = {ViolationKind.DRAIN_NEVER_RETURNS}) LATCH_STUCK;
    }

    /** The scenario at one point: {@code maxTokens} of the late request (default 1); {@code priorUse} 1: an earlier X first. */
    public DpPauseLatchStuckScenario(FixSet fixes, Configuration config, Params p) {
        super(new DpDeployment(fixes, config), p);
        Coroutine<Void> pause = actor("client: pause_generation; DP ranks")
                .step("AsyncLLM.pause_generation", dp::pauseGeneration)
                .step("DPEngineCoreProc.run_busy_loop", dp::iterate)
                .build();
        Coroutine<Void> late = actor("client: add_request(X)")
                .step("DPAsyncMPClient.add_request_async", () -> dp.addRequest(REQUEST_ID, maxTokens))
                .build();
        actors(pause, late);
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.DRAINED).and("no rank steps and the late request finished after resume",
                () -> dp.scheduler().requestsSnapshot().stream().allMatch(r -> r.isFinished())));
    }
}
