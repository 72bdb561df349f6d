package vllmrace.model.upstream;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Where the model says which upstream function a method mirrors: the method's first statement is
 * {@code UpstreamPins.enter(UpstreamPin.X)}, so the pin is machine-readable at the one place it applies, and a run
 * can record which pinned functions a race goes through ({@link #record}). Off (one volatile read) except inside
 * {@link #record}, which the catalogue uses single-threaded, with the step enumerator.
 */
public final class UpstreamPins {
    private static final StackWalker WALKER = StackWalker.getInstance();
    private static volatile Map<UpstreamPin, String> recording;

    private UpstreamPins() {
    }

    /** Marks the calling model method as the mirror of {@code pin}; records it while {@link #record} runs. */
    public static void enter(UpstreamPin pin) {
        mark(pin);
    }

    /**
     * As {@link #enter}, where the calling method mirrors {@code pin} only in some configurations (an override that
     * applies under the AsyncScheduler alone): one call, so the condition is part of the pin, not of the model.
     */
    public static void enterWhen(boolean applies, UpstreamPin pin) {
        if (applies) {
            mark(pin);
        }
    }

    /** Records {@code pin} with the model method two frames up (the caller of enter / enterWhen). */
    private static void mark(UpstreamPin pin) {
        Map<UpstreamPin, String> r = recording;
        if (r != null && !r.containsKey(pin)) {
            r.put(pin, WALKER.walk(frames -> frames.skip(2).findFirst()
                    .map(f -> simpleName(f.getClassName()) + "." + f.getMethodName()).orElse("?")));
        }
    }

    /**
     * Runs {@code body} and returns the pins it entered, each with the model method that entered it
     * ({@code Class.method}), in first-entry order. Not reentrant; one recording at a time.
     *
     * @throws IllegalStateException if a recording is already running
     */
    public static synchronized Map<UpstreamPin, String> record(Runnable body) {
        Objects.requireNonNull(body, "body");
        if (recording != null) {
            throw new IllegalStateException("a recording is already running");
        }
        Map<UpstreamPin, String> r = new LinkedHashMap<>();
        recording = r;
        try {
            body.run();
        } finally {
            recording = null;
        }
        return r;
    }

    private static String simpleName(String className) {
        String s = className.substring(className.lastIndexOf('.') + 1);
        int inner = s.indexOf('$');
        return inner < 0 ? s : s.substring(0, inner);
    }
}
