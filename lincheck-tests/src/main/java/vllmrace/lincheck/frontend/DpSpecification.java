package vllmrace.lincheck.frontend;

/**
 * The sequential specification of {@link DpOperations}: once no rank steps, the drain returns (LV3); every other
 * operation has no result a caller sees.
 */
public class DpSpecification {
    public void addRequest() {
    }

    public void pause() {
    }

    public void resume() {
    }

    public void ranksStep() {
    }

    public boolean drainAfterQuiescence() {
        return true;
    }
}
