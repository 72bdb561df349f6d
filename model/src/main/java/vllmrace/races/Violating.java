package vllmrace.races;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** On a {@link RaceOutcome} constant: the run broke an invariant (the race was observed); the value says how. */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface Violating {
    String value();
}
