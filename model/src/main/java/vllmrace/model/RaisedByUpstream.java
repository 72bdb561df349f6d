package vllmrace.model;

/**
 * Marks an exception that upstream itself raises to its caller on this path (e.g. {@code OutputProcessor.add_request}'s
 * {@code ValueError("... already running.")}, HTTP 400): a scenario may expect an actor to end with it. Any other
 * exception out of an actor is a modelling error, whatever the scenario's arbiter makes of it.
 */
public interface RaisedByUpstream {
}
