package vllmrace.races;

/** The three vLLM components the suite models. */
public enum Component {
    FRONTEND("frontend", "AsyncLLM, OutputProcessor, the FIFO channel to EngineCore"),
    SCHEDULER("scheduler", "Scheduler request map, KV block pool"),
    CONNECTOR("connector", "MultiConnector, NIXL-like and LMCache-like connectors");

    private final String packageName;
    private final String description;

    Component(String packageName, String description) {
        this.packageName = packageName;
        this.description = description;
    }

    /** The sub-package holding this component's scenarios and tests. */
    public String packageName() {
        return packageName;
    }

    public String description() {
        return description;
    }
}
