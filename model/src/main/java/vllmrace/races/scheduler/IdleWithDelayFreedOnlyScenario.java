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
 * IdleWithDelayFreedOnly: with only a finished, delay-freed request left, the busy loop stops stepping, so the send that
 * would free it is never polled and its blocks never return.
 *
 * <p><b>Upstream.</b> PR #43433 "Keep scheduler alive for delayed KV connector frees" (lucifer1004, merged 2026; symptom
 * #41180: {@code reset_prefix_cache} fails on an idle prefiller). Before it, {@code has_requests()} was
 * {@code has_unfinished_requests() or len(self.finished_req_ids) > 0} (scheduler.py@00024d31), and the busy loop
 * ({@code core.py@ac3cb2e2}) blocks on {@code input_queue.get()} when it is False; {@code get_finished} is polled only
 * inside {@code execute_model}. #43433 counts finished requests still in {@code requests} ({@code len(self.requests) >
 * num_in_queues}), so the loop keeps taking no-forward steps until the transfer is reported.
 *
 * <p><b>Set-up and actors.</b> A prefill-side NIXL connector ({@link SavePolicy#ON_SUCCESS}). R (one output token) ran
 * its final step; update_from_output finished it: {@code request_finished} started the send to the decoder, the free is
 * delayed, {@code finished_req_ids = {R}}. Actor 1: the worker: the decoder's read completes. Actor 2: two busy-loop
 * iterations.
 *
 * <pre>
 *   actor 1: worker                          actor 2: EngineCore busy loop                 arbiter
 *                                            (set-up: R finished, send in flight, delay-freed)
 *                                            1-3. schedule(N) ships finished_req_ids {R}
 *                                                 (now empty); execute_model polls get_finished:
 *                                                 the send is not done yet
 *   4. the decoder's read completes
 *                                            5. has_requests(): no unfinished request, no finished
 *                                               id to ship -> False (before #43433): no step, so
 *                                               nobody polls get_finished again
 *                                                                                          6. k more iterations: nothing
 *                                                                                             changes; R holds its blocks
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (SC5, LV2): a delay-freed request's releasing event is eventually observed: after every transfer
 * completed and {@link vllmrace.model.detect.Settle#SETTLED_ITERATIONS} more iterations changed nothing, no finished request
 * holds blocks.
 *
 * <p><b>Window.</b> The order of two events: the read completing before the last step that polls, or after it. No split of
 * either actor's steps is needed.
 *
 * <p><b>Verdicts.</b> Reported ({@code HAS_REQUESTS_COUNTS_DELAY_FREED} off): the send completing after the loop went idle
 * leaves {@code LEAKED}. Fixed: never. vLLM main: closed, by #43433.
 */
public final class IdleWithDelayFreedOnlyScenario extends SchedulerRaceScenario {
    private static final int SETUP_ITERATIONS = 4;

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("the send's completion was polled while the loop still stepped: finished_sending(R) freed R once") FREED,
        @Violating(value = "the send completed after the busy loop stopped stepping: nothing polls get_finished, R stays in "
                + "requests holding its blocks (LV2)", detectors = {ViolationKind.REQUEST_LEAKED},
                cascade = {ViolationKind.BLOCK_LEAK},
                cascadeWhy = "the leaked request's blocks, where the quiescence check reaches them") LEAKED;
    }

    /** The scenario at one point of its family (see the race's grid). */
    public IdleWithDelayFreedOnlyScenario(FixSet fixes, Configuration config, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.ON_SUCCESS, 4 + 4 * p.get("otherRequests", 0, 0)), p);
        sendFamily(REQUEST_ID, p);
        rig.runBusyLoopOnce(); // ADD applied; schedule(1) runs R's final step
        rig.track(REQUEST_ID);
        for (int i = 0; i < SETUP_ITERATIONS && !rig.request(REQUEST_ID).isFinished(); i++) {
            rig.runBusyLoopOnce(); // until update_from_output finishes R and its send starts
        }
        requireSetUp(rig.request(REQUEST_ID).isFinished() && rig.scheduler().getRequest(REQUEST_ID) != null,
                "R was expected finished and delay-freed, is " + rig.request(REQUEST_ID));
        actors(rig.worker("the decoder's read of R's blocks completes"), rig.busyLoop().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.FREED).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED, FINISHED_STOPPED)));
    }
}
