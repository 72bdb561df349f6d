package vllmrace.lincheck.frontend;

/**
 * The sequential specification of {@link DpOperations}: once no rank steps, the drain returns (LV3); a resume is refused
 * while a pause has not reached the ranks' consensus (their next lockstep iteration); no other operation has a result a
 * caller sees.
 */
public class DpSpecification {
    private boolean pauseInFlight;

    public void addRequest() {
    }

    /** #39366: the pause completes at the ranks' next lockstep iteration, their consensus. */
    public void pause() {
        pauseInFlight = true;
    }

    public String resume() {
        return pauseInFlight ? "refused" : "resumed";
    }

    public void ranksStep() {
        pauseInFlight = false;
    }

    public boolean drainAfterQuiescence() {
        pauseInFlight = false;
        return true;
    }
}
