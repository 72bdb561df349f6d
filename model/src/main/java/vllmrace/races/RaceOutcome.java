package vllmrace.races;

import java.lang.reflect.Field;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import vllmrace.model.detect.ViolationKind;

/**
 * What one run of a scenario came to, as classified by the scenario's arbiter from the model's detectors.
 * Implemented by one enum per race whose every constant is annotated {@link Clean} or {@link Violating} with its meaning
 * and the detectors it stands on; the modelling error is the one all races share ({@link #UNEXPECTED}). JCStress reports
 * the constant's name as the outcome id.
 */
public interface RaceOutcome {
    /** The modelling error every race shares ({@link ModellingErrorOutcome}): what an arbiter returns for an ending it does not describe. */
    RaceOutcome UNEXPECTED = ModellingErrorOutcome.UNEXPECTED;

    /** Which of the three kinds of run this is. */
    default OutcomeKind kind() {
        Field f = field(this);
        int annotations = (f.isAnnotationPresent(Clean.class) ? 1 : 0) + (f.isAnnotationPresent(Violating.class) ? 1 : 0)
                + (f.isAnnotationPresent(ModellingError.class) ? 1 : 0);
        if (annotations != 1) {
            throw new IllegalStateException(f + " must be annotated with exactly one of @Clean, @Violating, @ModellingError");
        }
        return f.isAnnotationPresent(Clean.class) ? OutcomeKind.CLEAN
                : f.isAnnotationPresent(Violating.class) ? OutcomeKind.VIOLATING : OutcomeKind.MODELLING_ERROR;
    }

    /** True when the run broke the race's invariant (the race was observed). */
    default boolean violation() {
        return kind() == OutcomeKind.VIOLATING;
    }

    /** True when the run is a modelling error: never clean, never the race. */
    default boolean modellingError() {
        return kind() == OutcomeKind.MODELLING_ERROR;
    }

    /** One line for the JCStress outcome table and the results row. */
    default String meaning() {
        Field f = field(this);
        return switch (kind()) {
            case CLEAN -> f.getAnnotation(Clean.class).value();
            case VIOLATING -> f.getAnnotation(Violating.class).value();
            case MODELLING_ERROR -> f.getAnnotation(ModellingError.class).value();
        };
    }

    /**
     * Whether this outcome stands with exactly these detectors fired: a violating outcome needs every one of its
     * {@link Violating#detectors()} and allows nothing beyond them and its {@link Violating#cascade()}; a clean one allows
     * none beyond its {@link Clean#tolerates()}; a modelling error stands with anything.
     */
    default boolean accepts(Set<ViolationKind> fired) {
        Field f = field(this);
        return switch (kind()) {
            case VIOLATING -> {
                Violating v = f.getAnnotation(Violating.class);
                if (v.anyDetector()) {
                    yield !fired.isEmpty();
                }
                Set<ViolationKind> required = kinds(v.detectors());
                Set<ViolationKind> allowed = kinds(v.detectors());
                allowed.addAll(kinds(v.cascade()));
                yield fired.containsAll(required) && allowed.containsAll(fired);
            }
            case CLEAN -> kinds(f.getAnnotation(Clean.class).tolerates()).containsAll(fired);
            case MODELLING_ERROR -> true;
        };
    }

    /** The detectors a violating outcome declares (its own and its cascade's), or a clean one tolerates. */
    default Set<ViolationKind> declaredDetectors() {
        Field f = field(this);
        return switch (kind()) {
            case VIOLATING -> {
                Set<ViolationKind> all = kinds(f.getAnnotation(Violating.class).detectors());
                all.addAll(kinds(f.getAnnotation(Violating.class).cascade()));
                yield all;
            }
            case CLEAN -> kinds(f.getAnnotation(Clean.class).tolerates());
            case MODELLING_ERROR -> EnumSet.noneOf(ViolationKind.class);
        };
    }

    private static Set<ViolationKind> kinds(ViolationKind[] kinds) {
        Set<ViolationKind> set = EnumSet.noneOf(ViolationKind.class);
        set.addAll(Arrays.asList(kinds));
        return set;
    }

    /**
     * The modelling error of runs classified by {@code outcomes}: its own {@link ModellingError} constant where it declares
     * one (the race hunt's), else the one every race shares, {@link #UNEXPECTED}.
     */
    static RaceOutcome modellingErrorOf(Class<? extends RaceOutcome> outcomes) {
        RaceOutcome[] errors = Arrays.stream(outcomes.getEnumConstants()).filter(RaceOutcome::modellingError)
                .toArray(RaceOutcome[]::new);
        if (errors.length > 1) {
            throw new IllegalStateException(outcomes.getName() + " has " + errors.length + " @ModellingError constants; at most one");
        }
        return errors.length == 1 ? errors[0] : UNEXPECTED;
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
