package vllmrace.races;

import java.lang.reflect.Field;

/**
 * What one run of a scenario came to, as classified by the scenario's arbiter from the model's detectors.
 * Implemented by one enum per race whose every constant is annotated {@link Violating} or {@link Clean} with its
 * meaning; JCStress reports the enum constant's name as the outcome id.
 */
public interface RaceOutcome {
    /** True when the run broke an invariant (the race was observed). */
    default boolean violation() {
        return field(this).isAnnotationPresent(Violating.class);
    }

    /** One line for the JCStress outcome table and the results row. */
    default String meaning() {
        Field f = field(this);
        Violating v = f.getAnnotation(Violating.class);
        Clean c = f.getAnnotation(Clean.class);
        if ((v == null) == (c == null)) {
            throw new IllegalStateException(f + " must be annotated either @Violating or @Clean");
        }
        return v != null ? v.value() : c.value();
    }

    private static Field field(RaceOutcome outcome) {
        Enum<?> constant = (Enum<?>) outcome;
        try {
            return constant.getDeclaringClass().getField(constant.name());
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException(e);
        }
    }
}
