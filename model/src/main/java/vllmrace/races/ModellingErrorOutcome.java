package vllmrace.races;

/**
 * The one modelling-error outcome the races share: the judge's, never declared per scenario. A run ends in it when an
 * actor raised what upstream does not, a detector fired that the scenario's outcome does not declare, or the arbiter
 * found an ending none of the scenario's outcomes describes. JCStress reports it under its name, {@code UNEXPECTED}.
 */
public enum ModellingErrorOutcome implements RaceOutcome {
    @ModellingError("any other violation or exception: a modelling error, never expected") UNEXPECTED
}
