package vllmrace.races;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import vllmrace.model.detect.ViolationKind;

/**
 * On a {@link RaceOutcome} constant: the run broke none of the race's invariants; the value says how it ended. The judge
 * accepts it only when no detector fired, or only {@link #tolerates()}: another race's detector that the same run trips,
 * declared with its reason (a scenario that judges one invariant of a shared run).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface Clean {
    String value();

    /** Detectors of another race this clean ending may show; none by default. */
    ViolationKind[] tolerates() default {};

    /** Whose detectors {@link #tolerates()} are, and why they fire here (required when there are any). */
    String toleratesWhy() default "";
}
