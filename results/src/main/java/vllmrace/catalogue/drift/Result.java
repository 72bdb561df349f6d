package vllmrace.catalogue.drift;

import java.util.Objects;

/** What {@link DriftCheck} found for one pin; {@code detail} is one line, or a unified diff for a CHANGED pin. */
public record Result(Pin pin, Status status, String detail) {
    public enum Status { UNCHANGED, CHANGED, GONE }

    public Result {
        Objects.requireNonNull(pin, "pin");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(detail, "detail");
    }
}
