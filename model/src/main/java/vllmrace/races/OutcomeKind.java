package vllmrace.races;

/** The three kinds of run: clean, the race, or a modelling error (which is never the race). */
public enum OutcomeKind {
    /** The run broke no invariant. */
    CLEAN,
    /** The run broke the race's invariant: the race was observed. */
    VIOLATING,
    /** The model or scenario is broken: an actor raised, or a violation the scenario does not expect. */
    MODELLING_ERROR
}
