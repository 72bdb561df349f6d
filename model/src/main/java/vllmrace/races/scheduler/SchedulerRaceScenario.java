package vllmrace.races.scheduler;

import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;

/**
 * What every scheduler race shares: an {@link EngineCoreRig}, actor 1 = a client ABORT reaching the input
 * thread, actor 2 = the busy loop (and the worker's transfer completions) in program order.
 */
abstract class SchedulerRaceScenario extends RigScenario<EngineCoreRig> {

    SchedulerRaceScenario(EngineCoreRig rig) {
        super(rig);
    }

    /**
     * How a one-request scenario ended when its race did not show: {@code aborted} (FINISHED_ABORTED, no finish
     * reason sent) or {@code completed} (FINISHED_LENGTH_CAPPED with "length", or FINISHED_STOPPED with "stop", sent),
     * each only if no detector fired, no
     * actor raised, everything was freed and {@code request_finished} ran exactly once; {@code unexpected} otherwise.
     * Call after the run reached quiescence and the race's own outcome was ruled out.
     */
    /**
     * Set-up of the races whose R finishes normally in its final step, at a point of their family: {@code maxTokens}
     * (default 1), {@code stopToken} (1: R's first output token is a stop token, so it finishes FINISHED_STOPPED at that
     * step; needs {@code maxTokens} 2 at least, which it then sets), and {@code otherRequests} (default 0: other
     * one-token requests in the batch).
     */
    protected final void sendFamily(String requestId, Params p) {
        boolean stop = p.get("stopToken", 0, 0) == 1;
        int maxTokens = p.get("maxTokens", stop ? 2 : 1, 1);
        rig.sendAdd(requestId, 4, maxTokens, stop ? 1 : 0);
        int others = p.get("otherRequests", 0, 0);
        for (int i = 0; i < others; i++) {
            rig.sendAdd(requestId + "o" + (i + 1), 4, 1);
        }
    }

    protected final <O extends RaceOutcome> O cleanEnding(String requestId, O aborted, O completed, O unexpected) {
        if (!rig.violations().isEmpty() || actorFailed() || !rig.allFreed()
                || rig.connector().requestFinishedCalls(requestId) != 1) {
            return unexpected;
        }
        RequestStatus status = rig.request(requestId).status();
        if (status == RequestStatus.FINISHED_ABORTED && rig.finishReasons(requestId) == null) {
            return aborted;
        }
        if ((status == RequestStatus.FINISHED_LENGTH_CAPPED && "length".equals(rig.finishReasons(requestId)))
                || (status == RequestStatus.FINISHED_STOPPED && "stop".equals(rig.finishReasons(requestId)))) {
            return completed;
        }
        return unexpected;
    }
}
