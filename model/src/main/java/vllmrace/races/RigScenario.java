package vllmrace.races;

import java.util.Objects;

/**
 * A race scenario over one EngineCore rig ({@link EngineRig}): the rig's step log and detectors are the scenario's, and
 * the shared arbiter settles the rig to quiescence before it judges.
 */
public abstract class RigScenario<R extends EngineRig> extends TwoActorScenario {
    protected final R rig;

    protected RigScenario(R rig) {
        super(Objects.requireNonNull(rig, "rig").stepLog(), rig.violations());
        this.rig = rig;
    }

    public R rig() {
        return rig;
    }

    /** Every transfer the environment will deliver is delivered and the busy loop settles ({@link EngineRig#runToQuiescence}). */
    @Override
    protected void settle() {
        rig.runToQuiescence();
    }
}
