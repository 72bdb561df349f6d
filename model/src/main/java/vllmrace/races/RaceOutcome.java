package vllmrace.races;

/**
 * What one run of a scenario came to, as classified by the scenario's arbiter from the model's detectors.
 * Implemented by one enum per race; JCStress reports the enum constant's name as the outcome id.
 */
public interface RaceOutcome {
    /** True when the run broke an invariant (the race was observed). */
    boolean violation();

    /** One line for the JCStress outcome table and the results row. */
    String meaning();
}
