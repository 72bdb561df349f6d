package vllmrace.races.connector;

import vllmrace.model.detect.ViolationKind;
import vllmrace.races.TwoActorScenario;

/** What every connector race shares: a {@link ConnectorRig}, two actors built in the constructor, one way to classify. */
abstract class ConnectorRaceScenario extends TwoActorScenario {
    protected final ConnectorRig rig;

    ConnectorRaceScenario(ConnectorRig rig) {
        super(rig.stepLog(), rig.violations());
        this.rig = rig;
    }

    public ConnectorRig rig() {
        return rig;
    }

    /** What the detectors found at quiescence, most severe first. */
    enum Finding {
        /** An upstream assert fired (a late or duplicate transfer report): EngineCore dead. */
        ENGINE_DEAD,
        /** A transfer touched a block after it was freed or reallocated (SC4). */
        WRITE_INTO_FREED_BLOCK,
        /** A request's transfers reached the scheduler as two terminal events (CN1). */
        DUPLICATE_TRANSFER_EVENT,
        /** A block or a delay-freed request is never released (SC5). */
        LEAK,
        /** Any other violation, an actor that raised, or something still held: a modelling error. */
        UNEXPECTED,
        /** Nothing: the scenario decides from the requests' final states. */
        NONE
    }

    /** The arbiter's first half: runs the system to quiescence and returns the most severe finding. */
    protected final Finding runToQuiescenceAndFind() {
        rig.runToQuiescence();
        if (rig.violations().engineDead()) {
            return Finding.ENGINE_DEAD;
        }
        if (rig.has(ViolationKind.WRITE_INTO_FREED_BLOCK)) {
            return Finding.WRITE_INTO_FREED_BLOCK;
        }
        if (rig.has(ViolationKind.DUPLICATE_TRANSFER_EVENT)) {
            return Finding.DUPLICATE_TRANSFER_EVENT;
        }
        if (rig.has(ViolationKind.BLOCK_LEAK) || rig.has(ViolationKind.DELAY_FREED_NEVER_RELEASED)) {
            return Finding.LEAK;
        }
        if (!rig.violations().isEmpty() || actorFailed() || !rig.allFreed()) {
            return Finding.UNEXPECTED;
        }
        return Finding.NONE;
    }
}
