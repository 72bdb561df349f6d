package vllmrace.races.connector;

import vllmrace.races.RaceOutcome;
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

    /**
     * The arbiter's first half: runs the system to quiescence; then the violating outcome the detectors make the run
     * (its declaration decides, most severe first), {@code UNEXPECTED} for any other finding, an actor that raised or
     * something still held, or null: nothing fired, the scenario decides from the requests' final states.
     */
    protected final <E extends Enum<E> & RaceOutcome> RaceOutcome runToQuiescenceAndFind(Class<E> outcomes) {
        rig.runToQuiescence();
        RaceOutcome found = firedOutcome(outcomes);
        if (found != null) {
            return found;
        }
        return !rig.violations().isEmpty() || actorFailed() || !rig.allFreed() ? RaceOutcome.UNEXPECTED : null;
    }
}
