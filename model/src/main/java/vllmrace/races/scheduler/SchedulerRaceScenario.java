package vllmrace.races.scheduler;

import vllmrace.model.sched.RequestStatus;
import vllmrace.races.RaceOutcome;
import vllmrace.races.TwoActorScenario;

/**
 * What every scheduler race shares: an {@link EngineCoreRig}, actor 1 = a client ABORT reaching the input
 * thread, actor 2 = the busy loop (and the worker's transfer completions) in program order.
 */
abstract class SchedulerRaceScenario extends TwoActorScenario {
    protected final EngineCoreRig rig;

    SchedulerRaceScenario(EngineCoreRig rig) {
        super(rig.stepLog(), rig.violations());
        this.rig = rig;
    }

    public EngineCoreRig rig() {
        return rig;
    }

    /**
     * How a one-request scenario ended when its race did not show: {@code aborted} (FINISHED_ABORTED, no finish
     * reason sent) or {@code completed} (FINISHED_LENGTH_CAPPED, "length" sent), each only if no detector fired, no
     * actor raised, everything was freed and {@code request_finished} ran exactly once; {@code unexpected} otherwise.
     * Call after the run reached quiescence and the race's own outcome was ruled out.
     */
    protected final <O extends RaceOutcome> O cleanEnding(String requestId, O aborted, O completed, O unexpected) {
        if (!rig.violations().isEmpty() || actorFailed() || !rig.allFreed()
                || rig.connector().requestFinishedCalls(requestId) != 1) {
            return unexpected;
        }
        RequestStatus status = rig.request(requestId).status();
        if (status == RequestStatus.FINISHED_ABORTED && rig.finishReasons(requestId) == null) {
            return aborted;
        }
        if (status == RequestStatus.FINISHED_LENGTH_CAPPED && "length".equals(rig.finishReasons(requestId))) {
            return completed;
        }
        return unexpected;
    }
}
