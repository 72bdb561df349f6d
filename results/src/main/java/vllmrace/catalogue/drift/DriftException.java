package vllmrace.catalogue.drift;

/** The drift check cannot run (bad checkout path, unreadable file); the message is one line for a terminal. */
public final class DriftException extends Exception {
    private static final long serialVersionUID = 1L;

    public DriftException(String message) {
        super(message);
    }

    public DriftException(String message, Throwable cause) {
        super(message, cause);
    }
}
