package vllmrace.catalogue.drift;

import java.util.Objects;

/** What {@link DriftCheck} found for one pin; {@code detail} is one line, or a unified diff for a CHANGED pin. */
public record Result(Pin pin, Status status, String detail) {
    /**
     * UNCHANGED, CHANGED or GONE (the file is there, the function is not) say what upstream did; MISSING says only that
     * the checkout has no such file (a partial tree), so nothing was checked and no race needs re-checking for it.
     */
    public enum Status {
        UNCHANGED, CHANGED, GONE, MISSING;

        /** Upstream moved away from the pin: its races are to be re-checked. */
        public boolean moved() {
            return this == CHANGED || this == GONE;
        }
    }

    public Result {
        Objects.requireNonNull(pin, "pin");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(detail, "detail");
    }
}
