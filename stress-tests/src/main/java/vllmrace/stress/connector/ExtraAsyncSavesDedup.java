package vllmrace.stress.connector;

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
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * ExtraAsyncSavesDedup — positive control for {@code multi_connector.py}'s {@code _extra_async_saves} (reference §3(b)).
 *
 * <p>Two children of one MultiConnector async-save the same finished request R; {@code request_finished} returns True
 * with {@code _extra_async_saves[R] = 1}. Whichever child's save completes first, its {@code finished_sending(R)} is
 * absorbed by the count and only the second reaches the scheduler, so R's only block is freed (and handed to R2)
 * after both saves read it.
 *
 * <pre>
 *   actor 1: LMCache worker             actor 2: EngineCore busy loop + Offloading worker    arbiter
 *   (set-up: R finished, 2 saves pending, extra = 1; R2 waits for the block)
 *   1. LMCache save of R completes      1-3. iteration (get_finished: maybe reports R)
 *                                       4. Offloading save of R completes
 *                                       5-10. two iterations: the 2nd report frees B; R2 gets B
 * </pre>
 *
 * <p>Invariant (CN3, SC4): the count drains exactly when every child that returned True has reported; R's blocks are
 * freed only then. Verdict: {@link Fixed} (today's upstream behaviour) must never show a violation. There is no
 * Reported variant: this is a positive control.
 */
public class ExtraAsyncSavesDedup {

    @JCStressTest
    @Outcome(id = "FREED_AFTER_LAST_SAVE", expect = ACCEPTABLE, desc = "one finished_sending(R), after both saves; R2 ran")
    @Outcome(id = "FREED_BEFORE_LAST_SAVE", expect = FORBIDDEN, desc = "a save read a freed block, or R was reported twice")
    @Outcome(id = "UNEXPECTED", expect = FORBIDDEN, desc = "a modelling error")
    @State
    public static class Fixed {
        final RaceScenario scenario = Race.ExtraAsyncSavesDedup.scenario(Variant.FIXED);

        /** The LMCache child's async save of R completes. */
        @Actor
        public void lmcacheSaveCompletes() {
            scenario.actor1().run();
        }

        /** Busy-loop iterations around the Offloading child's save of R completing. */
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
