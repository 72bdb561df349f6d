package vllmrace.stress.scheduler;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.L_Result;
import vllmrace.races.Race;
import vllmrace.races.RaceScenario;
import vllmrace.races.Variant;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * DoubleFreeOnAbortedAsyncSave — upstream PR #33377 (KuntaiDu, merged), seed 000.
 *
 * <p>With async scheduling (a batch queue of 2) {@code schedule()} for step N+1 runs before
 * {@code update_from_output} for step N, and an ABORT is applied in between: at the next input-queue pass, and
 * since #29987 also right before {@code update_from_output}. A connector that async-saves finished requests
 * (aborted ones included) makes {@code request_finished} return True, so the aborted request is not removed from
 * {@code Scheduler.requests}: it stays there, finished, until its save completes. Before #33377
 * {@code update_from_output} only skipped {@code request is None}.
 *
 * <pre>
 *   actor 1: client ABORT(R)                 actor 2: EngineCore busy loop                 arbiter
 *                                            1. _process_input_queue
 *                                            2. schedule(1): R's final step
 *   3. ABORT(R) -> input_queue, aborts_queue
 *                                            4. _process_input_queue: finish_requests(R)
 *                                               -> _free_request -> request_finished: save, delay
 *                                            5. schedule(2)
 *                                            6. update_from_output(1): R is finished but present
 *                                               -> token appended, check_stop -> _free_request AGAIN
 *                                                                                          7. two saves complete:
 *                                                                                             finished_sending(R) x2
 *                                                                                             -> 2nd: assert fails
 * </pre>
 *
 * <p>Every variant here also has seed 003's proposed skip of late reports ON, so the final assert is logged and
 * skipped instead of killing EngineCore; the verdict reads the double {@code _free_request} (SC1) itself.
 *
 * <p>Invariants (reference §5): SC1 {@code _free_request} / {@code request_finished} at most once per request,
 * SC2 {@code _free_blocks} once, SC3 no model output applied to a finished request.
 *
 * <p>Verdicts: {@link Reported} ({@code IS_FINISHED_GUARD} off, every other fix on) must OBSERVE
 * {@code FREED_TWICE}; {@link Fixed} must never show it. Run: {@code mvn verify} (quick), or the race catalogue.
 */
public class DoubleFreeOnAbortedAsyncSave {

    @JCStressTest
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "ABORT applied before update_from_output(1): R aborted, freed once")
    @Outcome(id = "COMPLETED", expect = ACCEPTABLE, desc = "update_from_output(1) first: R finished by length, freed once")
    @Outcome(id = "FREED_TWICE", expect = ACCEPTABLE_INTERESTING, desc = "the race: the aborted R's output processed, _free_request twice, finished_sending for a gone id")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Reported {
        final RaceScenario scenario = Race.DoubleFreeOnAbortedAsyncSave.scenario(Variant.REPORTED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** Two busy-loop iterations: schedule(1), schedule(2), update_from_output(1). */
        @Actor
        public void busyLoop() {
            scenario.actor2().run();
        }

        @Arbiter
        public void runToQuiescence(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }

    @JCStressTest
    @Outcome(id = "ABORTED", expect = ACCEPTABLE, desc = "ABORT applied before update_from_output(1): R aborted, freed once")
    @Outcome(id = "COMPLETED", expect = ACCEPTABLE, desc = "update_from_output(1) first: R finished by length, freed once")
    @Outcome(id = "FREED_TWICE", expect = FORBIDDEN, desc = "the race must be gone with IS_FINISHED_GUARD")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.DoubleFreeOnAbortedAsyncSave.scenario(Variant.FIXED);

        /** Client ABORT(R) reaches the input thread. */
        @Actor
        public void abortArrives() {
            scenario.actor1().run();
        }

        /** Two busy-loop iterations: schedule(1), schedule(2), update_from_output(1). */
        @Actor
        public void busyLoop() {
            scenario.actor2().run();
        }

        @Arbiter
        public void runToQuiescence(L_Result r) {
            r.r1 = scenario.arbiter();
        }
    }
}
