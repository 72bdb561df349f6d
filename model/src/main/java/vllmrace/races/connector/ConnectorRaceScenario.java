package vllmrace.races.connector;

import vllmrace.races.TwoActorScenario;

/** What every connector race shares: a {@link ConnectorRig} and two actors built in the constructor. */
abstract class ConnectorRaceScenario extends TwoActorScenario {
    protected final ConnectorRig rig;

    ConnectorRaceScenario(ConnectorRig rig) {
        super(rig.stepLog(), rig.violations());
        this.rig = rig;
    }

    public ConnectorRig rig() {
        return rig;
    }
}
