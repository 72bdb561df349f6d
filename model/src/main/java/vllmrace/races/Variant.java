package vllmrace.races;

/** Which behaviour a run models: the race's own fix(es) OFF (as reported) or ON (fixed). */
public enum Variant {
    REPORTED("Reported"),
    FIXED("Fixed");

    private final String className;

    Variant(String className) {
        this.className = className;
    }

    /** The nested class name a harness uses for this variant. */
    public String className() {
        return className;
    }
}
