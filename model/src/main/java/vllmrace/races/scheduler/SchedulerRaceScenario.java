package vllmrace.races.scheduler;

import vllmrace.races.Params;
import vllmrace.races.RigScenario;

/**
 * What every scheduler race shares: an {@link EngineCoreRig}, actor 1 = a client ABORT reaching the input
 * thread, actor 2 = the busy loop (and the worker's transfer completions) in program order.
 */
abstract class SchedulerRaceScenario extends RigScenario<EngineCoreRig> {

    SchedulerRaceScenario(EngineCoreRig rig, Params p) {
        super(rig, p);
    }

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
}
