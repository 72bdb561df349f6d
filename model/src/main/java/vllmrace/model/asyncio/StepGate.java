package vllmrace.model.asyncio;

/**
 * The one place a controlled scheduler may switch threads: before each {@link Coroutine} step (the code between two
 * awaits, the unit every engine of the suite treats as atomic). Nobody installed, it costs one volatile read. The
 * bounded-exhaustive linearizability checker installs one for the length of a check, to run every interleaving of
 * its operations' steps without a tool's agent.
 */
public final class StepGate {
    /** Told about every step, on the thread that runs it. */
    public interface Scheduler {
        /** Before {@code task}'s step {@code step}, before it takes the loop's lock: may park the thread. */
        void beforeStep(String task, String step);

        /** After the step ran (or raised). */
        void afterStep();
    }

    private static volatile Scheduler scheduler;

    private StepGate() {
    }

    /** Installs {@code s}; refuses a second one (two checks in one JVM at once would steal each other's threads). */
    public static synchronized void install(Scheduler s) {
        if (s == null) {
            throw new IllegalArgumentException("scheduler must not be null");
        }
        if (scheduler != null) {
            throw new IllegalStateException("a step scheduler is already installed");
        }
        scheduler = s;
    }

    /** Removes {@code s}; anything else installed is left alone. */
    public static synchronized void uninstall(Scheduler s) {
        if (scheduler == s) {
            scheduler = null;
        }
    }

    static void beforeStep(String task, String step) {
        Scheduler s = scheduler;
        if (s != null) {
            s.beforeStep(task, step);
        }
    }

    static void afterStep() {
        Scheduler s = scheduler;
        if (s != null) {
            s.afterStep();
        }
    }
}
