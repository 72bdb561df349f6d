package vllmrace.model.connector;

/**
 * A scenario told the {@link TestAsyncConnector} to complete a transfer it does not have in flight: a caller
 * error (the scenario is wrong), not a race consequence. Nothing changes when it is thrown.
 */
public final class UnknownTransferException extends IllegalStateException {
    public UnknownTransferException(String message) {
        super(message);
    }
}
