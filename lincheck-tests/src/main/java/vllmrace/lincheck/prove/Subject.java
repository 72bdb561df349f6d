package vllmrace.lincheck.prove;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Objects;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * What a check runs: a Lincheck operations class (fresh instance per history, built after {@code configure} ran, as
 * Lincheck builds it), the sequential specification its results are compared with, and the invariants its
 * {@code @Validate} method checks. The same three Lincheck uses, so the two engines check the same thing.
 */
public record Subject(String name, Class<?> operations, Class<?> specification, Runnable configure) {
    public Subject {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(operations, "operations");
        Objects.requireNonNull(specification, "specification");
        Objects.requireNonNull(configure, "configure");
    }

    Object newOperations() {
        return construct(operations);
    }

    Object newSpecification() {
        return construct(specification);
    }

    /** The invariants after a part of a program: null when they hold, else what broke. */
    String validate(Object target) {
        for (Method m : operations.getMethods()) {
            if (m.isAnnotationPresent(Validate.class)) {
                try {
                    m.invoke(target);
                } catch (InvocationTargetException e) {
                    return String.valueOf(e.getCause().getMessage());
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(m + " is not callable", e);
                }
            }
        }
        return null;
    }

    private static Object construct(Class<?> type) {
        try {
            var constructor = type.getDeclaredConstructor();
            constructor.setAccessible(true);
            return constructor.newInstance();
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("building " + type.getSimpleName() + " failed", e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(type.getName() + " needs a no-argument constructor", e);
        }
    }
}
