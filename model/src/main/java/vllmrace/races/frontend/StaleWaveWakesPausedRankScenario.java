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
 * StaleWaveWakesPausedRank: a request's {@code START_DP_WAVE} is still on its way when {@code pause_generation} pauses
 * both (idle) ranks at once; rank 0 then takes the stale START, sets {@code engines_running} and steps, and its per-step
 * collective waits for rank 1, which is paused: neither returns (upstream: a collective weight load then deadlocks).
 *
 * <p><b>Upstream.</b> PR #39366 (merged), the two-phase DP pause; #38761 (closed) gives the interleaving ("Send pause, pause
 * returns ... Some engines get start_dp_wave and go into dummy batch, some get collective weight sync requests,
 * deadlock!"). Before it, {@code DPEngineCoreProc._pause_complete} is {@code not self.has_work()} (an idle rank pauses at
 * once) and {@code START_DP_WAVE} is honoured whenever {@code exclude_eng_index != self.engine_index and new_wave >=
 * self.current_wave}. The PR keeps a pausing rank stepping with {@code pending_pause} until every rank reaches consensus in
 * {@code sync_dp_state}, and then ignores START ({@code if self.ignore_start_dp_wave: return};
 * {@code DP_TWO_PHASE_PAUSE}).
 *
 * <p><b>Set-up and actors.</b> Two DP ranks and the coordinator idle at wave 0; requests go to rank 1. Actor 1:
 * {@code add_request(X)} (ADD to rank 1, FIRST_REQ: the coordinator broadcasts START excluding rank 1), then the ranks'
 * busy-loop iteration. Actor 2: {@code pause_generation(mode="abort")}. Arbiter: the ranks run until none steps, LV3, then
 * resume.
 *
 * <pre>
 *   actor 1: request, ranks                        actor 2: pause
 *   1. ADD(X) to rank 1; FIRST_REQ -> coordinator:
 *      START_DP_WAVE(0, exclude rank 1) on its way
 *                                                  2. pause_scheduler(abort): rank 1 aborts X;
 *                                                     both idle: paused at once
 *   3. ranks: rank 0 takes the stale START:
 *      engines_running, a dummy step whose
 *      collective needs rank 1, paused -> hang
 * </pre>
 *
 * <p>The request and its wave first, the pause finds both ranks idle and nothing wakes them; the window is the pause
 * landing while START is on its way (or before it arrives).
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: its window is in the DP coordination, whatever the number of
 * batches in flight.
 *
 * <p><b>Yields.</b> It needs no yield inside a frontend coroutine: the START in flight is between processes.
 *
 * <p><b>Invariant</b> (LV4 of lifecycle §5): a DP rank steps only with every rank of its group stepping.
 *
 * <p><b>Verdicts.</b> Reported ({@code DP_TWO_PHASE_PAUSE} off): the pause while START is on its way wakes rank 0 alone.
 * Fixed: never (the pausing ranks step together to consensus, and ignore START after it). vLLM main: closed, by #39366.
 * Not modelled: the PR's own regression found in review (a stale-wave sender excluded from its own broadcast), fixed
 * before merge.
 */
public final class StaleWaveWakesPausedRankScenario extends DpScenario {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("the ranks stepped together or not at all: the wave ended before the pause, or the pause reached consensus "
                + "and START was ignored") RANKS_TOGETHER,
        @Violating(value = "a stale START_DP_WAVE woke rank 0 after both ranks paused: it steps alone and its per-step "
                + "collective waits for paused rank 1", detectors = {ViolationKind.DP_STEP_WITHOUT_PEER}) RANK_WOKEN_ALONE;
    }

    /** The scenario at one point: {@code maxTokens} of the request (default 1); {@code priorUse} 1: an earlier X first. */
    public StaleWaveWakesPausedRankScenario(FixSet fixes, Configuration config, Params p) {
        super(new DpDeployment(fixes, config), p);
        Coroutine<Void> request = actor("client: add_request(X); DP ranks")
                .step("DPAsyncMPClient.add_request_async", () -> dp.addRequest(REQUEST_ID, maxTokens))
                .step("DPEngineCoreProc.run_busy_loop", dp::iterate)
                .build();
        Coroutine<Void> pause = actor("client: pause_generation")
                .step("AsyncLLM.pause_generation", dp::pauseGeneration)
                .build();
        actors(request, pause);
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.RANKS_TOGETHER));
    }
}
