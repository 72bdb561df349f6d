package vllmrace.lincheck.prove;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import org.jetbrains.lincheck.datastructures.Operation;

/**
 * One operation call of a program: a public method of the operations class (or of its sequential specification, which
 * has a method of the same name and parameters) and its arguments.
 */
public record Call(String method, List<Object> args) {
    public Call {
        Objects.requireNonNull(method, "method");
        args = List.copyOf(args);
    }

    public static Call of(String method, Object... args) {
        return new Call(method, List.of(args));
    }

    /** The call a Lincheck actor stands for. */
    public static Call of(org.jetbrains.kotlinx.lincheck.Actor actor) {
        return new Call(actor.getMethod().getName(), actor.getArguments());
    }

    /** The Lincheck non-parallel group of this call's operation on {@code operations}, or null. */
    public String nonParallelGroup(Class<?> operations) {
        Operation op = method(operations).getAnnotation(Operation.class);
        return op == null || op.nonParallelGroup().isEmpty() ? null : op.nonParallelGroup();
    }

    /**
     * Runs the call on {@code target}: what it returned ({@code null} for void), or {@link Threw} for what it raised.
     * Lincheck compares results the same way: a value by {@code equals}, an exception by its class.
     */
    public Object invoke(Object target) {
        try {
            return method(target.getClass()).invoke(target, args.toArray());
        } catch (InvocationTargetException e) {
            return new Threw(e.getCause().getClass().getName(), String.valueOf(e.getCause().getMessage()));
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(this + " is not callable on " + target.getClass().getName(), e);
        }
    }

    Method method(Class<?> type) {
        for (Method m : type.getMethods()) {
            if (m.getName().equals(method) && m.getParameterCount() == args.size()) {
                return m;
            }
        }
        throw new IllegalArgumentException(type.getName() + " has no operation " + method + "/" + args.size());
    }

    @Override
    public String toString() {
        return method + "(" + args.stream().map(String::valueOf).collect(Collectors.joining(", ")) + ")";
    }

    /** An operation's exception as its result: equal when the classes are (the message is for the reader). */
    public record Threw(String exception, String message) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Threw t && t.exception.equals(exception);
        }

        @Override
        public int hashCode() {
            return exception.hashCode();
        }

        @Override
        public String toString() {
            return "threw " + exception.substring(exception.lastIndexOf('.') + 1) + ": " + message;
        }
    }
}
