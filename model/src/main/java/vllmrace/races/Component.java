package vllmrace.races;

import java.util.Locale;

/** The three vLLM components the suite models; each one's scenarios live in the sub-package of its lower-case name. */
public enum Component {
    /** AsyncLLM, OutputProcessor, the FIFO channel to EngineCore. */
    FRONTEND,
    /** Scheduler request map, KV block pool. */
    SCHEDULER,
    /** MultiConnector, NIXL-like and LMCache-like connectors. */
    CONNECTOR;

    /** The sub-package holding this component's scenarios and tests. */
    public String packageName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
