package vllmrace.races;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a {@link RaceOutcome} constant: the run is neither clean nor the race, but a broken model or scenario (an actor
 * raised, or a violation the scenario does not expect). Never counted as "bug found": every engine turns a run that
 * ends here into a harness error, which fails the build.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface ModellingError {
    String value();
}
