package vllmrace.races;

/**
 * What opens a race's window, as its reported variant shows it at the default point of its family (the step enumerator
 * checks the declared shape; Lincheck and JCStress judge outcomes, whatever the shape).
 */
public enum Window {
    /** Both sequential orders of the two actors are clean: only an interleaving of their steps shows the race. */
    INTERLEAVING,
    /**
     * One sequential order is clean and the other shows the race: the window is the order of two events that upstream's
     * timing decides (a transfer that completes after the busy loop went idle, a message that lands before another one is
     * consumed), not a split of either actor's steps. Interleavings may show it too.
     */
    ORDER,
    /**
     * Every order violates: an event the request is owed never comes (the remote prefill side never pushes), so no
     * timing avoids the leak; only the fix's own event (a deadline) ends it. The race is with the environment, not between
     * the actors; the enumerator checks that every schedule violates.
     */
    LOST_EVENT,
    /**
     * Both sequential orders violate: the ordinary timing (two messages arriving between two busy-loop iterations) already
     * shows it, and only an interleaving (a message landing while a step executes) avoids it. The enumerator checks that
     * both orders violate.
     */
    SEQUENTIAL
}
