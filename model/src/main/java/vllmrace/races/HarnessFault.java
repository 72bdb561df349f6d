package vllmrace.races;

import vllmrace.model.detect.ViolationKind;

/**
 * The faults the harness self-tests inject into a run, as a broken model would break it: each must make the run a
 * modelling error in every engine and fix set, whether the run would have been the race or clean. Between them they
 * reach each of the judge's paths: an actor that never did its work (no ending holds), one that did its work and then
 * raised (the race's detectors fire: only the judge's check of the actors stops it passing for the race), and a detector
 * no outcome declares.
 */
public enum HarnessFault {
    /** Actor 1's first step raises what upstream never raises there. */
    ACTOR_RAISES("ActorRaises", "actor 1's first step made to raise") {
        @Override
        void inject(RaceScenario scenario, ViolationKind stray) {
            scenario.actor1().injectFault(fault());
        }
    },
    /** Actor 1 runs every step and then raises: the run can be the race by its detectors and still be broken. */
    ACTOR_RAISES_AFTER_ITS_WORK("ActorRaisesLate", "actor 1 made to raise after its last step") {
        @Override
        void inject(RaceScenario scenario, ViolationKind stray) {
            scenario.actor1().injectFaultAfterLastStep(fault());
        }
    },
    /** The run records a detector finding no outcome of the race declares. */
    STRAY_DETECTOR("StrayDetector", "a detector finding no outcome of the race declares") {
        @Override
        void inject(RaceScenario scenario, ViolationKind stray) {
            ((TwoActorScenario) scenario).violationLog().record(stray, "R", "injected fault: a stray detector finding (harness self-test)");
        }
    };

    private final String className;
    private final String what;

    HarnessFault(String className, String what) {
        this.className = className;
        this.what = what;
    }

    /** Breaks a fresh scenario; {@code stray} is a detector none of its race's outcomes declares. */
    abstract void inject(RaceScenario scenario, ViolationKind stray);

    static IllegalStateException fault() {
        return new IllegalStateException("injected fault: actor 1 raises (harness self-test)");
    }

    /** {@code subject} with this fault injected. */
    public Subject on(Subject subject) {
        return subject.withFault(this);
    }

    /** The simple name of a generated class that runs it. */
    public String className() {
        return className;
    }

    @Override
    public String toString() {
        return what;
    }
}
