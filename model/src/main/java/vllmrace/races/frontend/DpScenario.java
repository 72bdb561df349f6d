package vllmrace.races.frontend;

import java.util.Objects;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.dp.DpDeployment;
import vllmrace.races.Params;
import vllmrace.races.TwoActorScenario;

/**
 * What the data-parallel races share: one {@link DpDeployment} (client, coordinator, two ranks), its actors' steps on one
 * loop of process steps, and a settle that runs the ranks to quiescence, checks LV3, then resumes generation and runs
 * them again (a held request completes).
 */
abstract class DpScenario extends TwoActorScenario {
    /** The client's request id in both stories. */
    static final String REQUEST_ID = "X";
    private static final int SETTLE_ITERATIONS = 8;

    protected final DpDeployment dp;
    protected final int maxTokens;
    private final EventLoop loop;

    DpScenario(DpDeployment dp, Params p) {
        super(Objects.requireNonNull(dp, "dp"));
        this.dp = dp;
        this.loop = new EventLoop(dp.stepLog());
        this.maxTokens = p.get("maxTokens", 1, 1);
        if (p.get("priorUse", 0, 0) == 1) {
            dp.addRequest(REQUEST_ID, 1); // an earlier request under X, served to its end
            runRanks();
            dp.publishToClient();
            requireSetUp(!dp.clientEnginesRunning(), "the earlier request under X did not end its wave");
        }
    }

    /** A one-step actor part on the scenario's loop. */
    protected Coroutine.Builder actor(String task) {
        return Coroutine.builder(loop, task);
    }

    /** The ranks' busy loops until no rank steps (bounded). */
    protected final void runRanks() {
        for (int i = 0; i < SETTLE_ITERATIONS && dp.iterate(); i++) {
            // each iteration is one lockstep step of both ranks
        }
    }

    @Override
    protected void settle() {
        runRanks();
        dp.checkQuiescence();
        dp.resumeGeneration();
        runRanks();
    }
}
