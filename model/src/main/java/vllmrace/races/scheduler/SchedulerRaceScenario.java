package vllmrace.races.scheduler;

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
}
