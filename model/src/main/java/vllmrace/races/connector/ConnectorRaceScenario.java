package vllmrace.races.connector;

import vllmrace.races.RigScenario;

/** What every connector race shares: a {@link ConnectorRig}, two actors built in the constructor, one way to classify. */
abstract class ConnectorRaceScenario extends RigScenario<ConnectorRig> {

    ConnectorRaceScenario(ConnectorRig rig) {
        super(rig);
    }
}
