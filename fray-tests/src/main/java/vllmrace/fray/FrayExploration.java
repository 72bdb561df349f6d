package vllmrace.fray;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import org.pastalab.fray.core.observers.TimelineCoverageType;
import org.pastalab.fray.core.randomness.ControlledRandom;
import org.pastalab.fray.core.randomness.Randomness;
import org.pastalab.fray.core.randomness.RandomnessProvider;
import org.pastalab.fray.core.scheduler.POSScheduler;
import org.pastalab.fray.core.scheduler.PCTScheduler;
import org.pastalab.fray.core.scheduler.Scheduler;
import org.pastalab.fray.junit.plain.FrayInTestLauncher;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RaceScenario;
import vllmrace.races.Subject;

/**
 * One Fray exploration of a subject: up to {@code budget} iterations, each a fresh scenario whose two actors run on two
 * threads under Fray's scheduler, then {@link RaceScenario#judge()}. The iteration fails, as Fray sees it, only when the
 * judged outcome is violating (the race) or a modelling error (a harness fault); the two are told apart here, never by
 * Fray, and the exploration stops at the first of either (Fray's default: stop at the first failure). A run that ends
 * without one explored {@code budget} random schedules: a sample, not every interleaving.
 *
 * <p>Must run in the JVM Fray prepared (its instrumented JDK and agent: {@code prepare-fray}); elsewhere Fray refuses.
 */
public final class FrayExploration {

    /** Fray's schedulers the bench compares. */
    public enum SchedulerKind {
        /** Partial-order sampling (Fray's default). */
        POS,
        /** Probabilistic concurrency testing, Fray's defaults: 3 priority change points. */
        PCT;

        Scheduler create(Randomness randomness) {
            return switch (this) {
                case POS -> new POSScheduler(randomness);
                case PCT -> new PCTScheduler(randomness);
            };
        }
    }

    /** How an exploration ended. */
    public enum Kind {
        /** A violating judged outcome: the race. */
        FOUND,
        /** {@code budget} iterations, every one clean. */
        CLEAN,
        /** A modelling-error outcome, an actor thread that threw, or Fray failing the run on its own: a harness error. */
        MODEL_ERROR
    }

    /**
     * What one exploration came to.
     *
     * @param iterations iterations run: the one that failed included, or the whole budget
     * @param millis     wall time of the exploration (Fray's launch to its return), in this JVM
     * @param outcome    the violating outcome's name, {@code CLEAN}, or {@code MODEL_ERROR:<text>}
     */
    public record Result(Kind kind, int iterations, long millis, String outcome) {
        public boolean found() {
            return kind == Kind.FOUND;
        }
    }

    /** Thrown by an iteration whose judged outcome is violating: Fray's failure. */
    static final class RaceObserved extends AssertionError {
        RaceObserved(RaceOutcome outcome) {
            super("violating outcome " + ((Enum<?>) outcome).name() + ": " + outcome.meaning());
        }
    }

    /** Thrown by an iteration that is a harness error, so that Fray stops; reported as a modelling error. */
    static final class HarnessError extends RuntimeException {
        HarnessError(String text) {
            super(text);
        }
    }

    /** Fray's per-iteration randomness, from one seeded source: the same seed explores the same schedules. */
    static final class SeededRandomness implements RandomnessProvider {
        private final Random seeds;

        SeededRandomness(long seed) {
            this.seeds = new Random(seed);
        }

        @Override
        public Randomness getRandomness() {
            return new ControlledRandom(new ArrayList<>(), new ArrayList<>(), new Random(seeds.nextLong()));
        }
    }

    private static final int TIMEOUT_SECONDS = 24 * 3600;

    // written by the iteration on Fray's main thread, read after Fray returned
    private static int iterations;
    private static String failure;
    private static Kind failureKind;

    private FrayExploration() {
    }

    /** Explores {@code subject} with {@code scheduler}, at most {@code budget} iterations, schedules drawn from {@code seed}. */
    public static synchronized Result explore(Subject subject, SchedulerKind scheduler, int budget, long seed) {
        Objects.requireNonNull(subject, "subject");
        if (budget < 1) {
            throw new IllegalArgumentException("budget must be at least 1: " + budget);
        }
        iterations = 0;
        failure = null;
        failureKind = null;
        SeededRandomness randomness = new SeededRandomness(seed);
        Throwable thrown = null;
        long start = System.nanoTime();
        try {
            FrayInTestLauncher.INSTANCE.launchFray(() -> iteration(subject), scheduler.create(randomness.getRandomness()),
                    randomness, budget, TIMEOUT_SECONDS, false, TimelineCoverageType.NONE, config -> kotlin.Unit.INSTANCE);
        } catch (Throwable t) {
            thrown = t;
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        if (failureKind != null) {
            return new Result(failureKind, iterations, millis, failure);
        }
        if (thrown != null) {
            // Fray failed the run itself (a deadlock, an exception outside the judge): never the race, never clean
            return new Result(Kind.MODEL_ERROR, iterations, millis, "MODEL_ERROR:fray: " + oneLine(thrown));
        }
        if (iterations != budget) {
            return new Result(Kind.MODEL_ERROR, iterations, millis,
                    "MODEL_ERROR:fray ran " + iterations + " of " + budget + " iterations with no failure");
        }
        return new Result(Kind.CLEAN, iterations, millis, "CLEAN");
    }

    /** One Fray iteration: a fresh scenario, its actors on two threads, the judge. */
    private static void iteration(Subject subject) {
        iterations++;
        RaceScenario scenario = subject.newScenario();
        Throwable[] escaped = new Throwable[2];
        Thread actor1 = new Thread(() -> {
            try {
                scenario.actor1().run();
            } catch (Throwable t) {
                escaped[0] = t;
            }
        }, "actor1");
        Thread actor2 = new Thread(() -> {
            try {
                scenario.actor2().run();
            } catch (Throwable t) {
                escaped[1] = t;
            }
        }, "actor2");
        actor1.start();
        actor2.start();
        try {
            actor1.join();
            actor2.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(Kind.MODEL_ERROR, "MODEL_ERROR:interrupted");
        }
        for (int i = 0; i < 2; i++) {
            if (escaped[i] != null) {
                fail(Kind.MODEL_ERROR, "MODEL_ERROR:actor" + (i + 1) + " threw " + oneLine(escaped[i]));
            }
        }
        RaceOutcome outcome = scenario.judge();
        String name = ((Enum<?>) outcome).name();
        if (outcome.modellingError()) {
            RuntimeException actorFailure = scenario.unexpectedActorFailure();
            fail(Kind.MODEL_ERROR, "MODEL_ERROR:" + name + (actorFailure == null ? "" : " (" + oneLine(actorFailure) + ")"));
        }
        if (outcome.violation()) {
            failure = name;
            failureKind = Kind.FOUND;
            throw new RaceObserved(outcome);
        }
    }

    private static void fail(Kind kind, String text) {
        failure = text;
        failureKind = kind;
        throw new HarnessError(text);
    }

    private static String oneLine(Throwable t) {
        String text = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
        return text.replaceAll("[\\t\\r\\n]+", " ");
    }
}
