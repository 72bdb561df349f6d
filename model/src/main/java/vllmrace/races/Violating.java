package vllmrace.races;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import vllmrace.model.detect.ViolationKind;

/**
 * On a {@link RaceOutcome} constant: the run broke an invariant (the race was observed); the value says how. The judge
 * ({@link RaceScenario#judge()}) accepts the outcome only when the detectors that fired are exactly {@link #detectors()},
 * plus any of {@link #cascade()}: a second detector the race legitimately trips, declared here with its reason. Any other
 * detector makes the run a modelling error.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface Violating {
    String value();

    /** The detectors that make this outcome the race: every one of them fires. */
    ViolationKind[] detectors() default {};

    /**
     * Any detector at all: only for the race hunt's generic outcome, which classifies findings by their own signature;
     * a race's outcome never uses it (RaceRegistryTest checks).
     */
    boolean anyDetector() default false;

    /** Detectors the race may also trip in this outcome (a cascade), each run either way; none by default. */
    ViolationKind[] cascade() default {};

    /** Why the {@link #cascade()} detectors fire with the race (required when there are any). */
    String cascadeWhy() default "";
}
