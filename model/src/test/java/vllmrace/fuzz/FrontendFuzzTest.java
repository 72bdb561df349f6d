package vllmrace.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.RequestAlreadyRunningException;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.model.frontend.SamplingParams;

/**
 * Sequential fuzzing of the connected frontend (AsyncLLM, OutputProcessor, ParentRequest, the socket pair, EngineCore):
 * seeded random sequences of what clients and the engine do, one after another, every fix on: add_request of a client id
 * that may still be running (the only exception allowed, upstream's "already running", which must leave the state as it
 * was), n = 1 or 2, aborts of live, finished and never-added ids, engine iterations and output-handler runs. After every
 * operation no detector fires; once everything drained, every accepted caller got exactly one final output and the
 * frontend and EngineCore agree (FE3, FE4, SC5 at quiescence). {@code -Dvllmrace.fuzz.seeds=N} runs more.
 */
@DisplayName("frontend fuzzing, sequential, every fix on")
class FrontendFuzzTest {
    private static final int SEEDS = Integer.getInteger("vllmrace.fuzz.seeds", 300);
    private static final int OPS = 40;
    private static final String[] CLIENT_IDS = {"x", "y"};
    private static final int DRAIN_ITERATIONS = 400;

    /** Runs seed {@code seed}; the first broken invariant, or null. Even seeds without a KV connector, odd ones with one. */
    static String run(long seed, FixSet fixes) {
        Random r = new Random(seed);
        VllmInstance vllm = seed % 2 == 0 ? new VllmInstance(fixes, Configuration.DEFAULT)
                : new VllmInstance(fixes, Configuration.DEFAULT, SavePolicy.values()[r.nextInt(SavePolicy.values().length)], 16);
        List<RequestOutputCollector> callers = new ArrayList<>();
        for (int step = 1; step <= OPS; step++) {
            String client = CLIENT_IDS[r.nextInt(CLIENT_IDS.length)];
            int pick = r.nextInt(10);
            String op;
            RuntimeException raised;
            if (pick < 3) {
                int n = 1 + r.nextInt(2);
                int maxTokens = 1 + r.nextInt(4);
                op = "add_request(" + client + ", n=" + n + ", max_tokens=" + maxTokens + ")";
                String before = vllm.outputProcessor().requestStatesSnapshot().toString();
                Coroutine<RequestOutputCollector> add = vllm.asyncLlm().addRequest(client, new SamplingParams(n, maxTokens, 0)).run();
                raised = add.failure();
                if (raised instanceof RequestAlreadyRunningException) {
                    if (!before.equals(vllm.outputProcessor().requestStatesSnapshot().toString())) {
                        return "seed " + seed + " step " + step + " " + op + ": rejected, but the frontend's state changed";
                    }
                    raised = null;
                } else if (raised == null) {
                    callers.add(add.join());
                }
            } else if (pick < 5) {
                String id = r.nextInt(6) == 0 ? "never-added" : client;
                op = "abort(" + id + ")";
                raised = vllm.asyncLlm().abort(id).run().failure();
            } else if (pick < 8) {
                op = "engine iteration";
                raised = attempt(() -> iterate(vllm));
            } else {
                op = "output handler";
                raised = vllm.asyncLlm().outputHandler().run().failure();
            }
            if (raised != null) {
                return "seed " + seed + " step " + step + " " + op + " raised " + raised;
            }
            if (!vllm.violations().isEmpty()) {
                return "seed " + seed + " step " + step + " " + op + ": " + vllm.violations().all();
            }
        }
        for (int i = 0; i < DRAIN_ITERATIONS && !(vllm.scheduler().requestsSnapshot().isEmpty() && vllm.inputSocket().isEmpty()); i++) {
            iterate(vllm);
            vllm.asyncLlm().outputHandler().run();
        }
        vllm.engineCore().processInputQueue();
        vllm.asyncLlm().outputHandler().run();
        vllm.checkQuiescence();
        if (!vllm.violations().isEmpty()) {
            return "seed " + seed + " at quiescence: " + vllm.violations().all();
        }
        for (RequestOutputCollector caller : callers) {
            if (caller.numFinalOutputs() != 1) {
                return "seed " + seed + ": the caller of " + caller.requestId() + " got " + caller.numFinalOutputs() + " final outputs";
            }
        }
        return vllm.scheduler().requestsSnapshot().isEmpty() ? null
                : "seed " + seed + ": EngineCore still holds " + vllm.scheduler().requestsSnapshot();
    }

    private static void iterate(VllmInstance vllm) {
        if (vllm.connector() != null) {
            vllm.connector().finishInFlightTransfers();
        }
        vllm.engineCore().runBusyLoopOnce();
    }

    private static RuntimeException attempt(Runnable body) {
        try {
            body.run();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    @Test
    @DisplayName("no client sequence breaks an invariant with every fix on")
    void noSequenceBreaksAnInvariant() {
        for (long seed = 0; seed < SEEDS; seed++) {
            String broken = run(seed, FixSet.all());
            if (broken != null) {
                fail(broken);
            }
        }
        System.out.println("frontend fuzzing: " + SEEDS + " seeds, " + SEEDS * OPS + " operations, every invariant held");
    }

    /** It finds what it is for: with no fix on, a re-add under a live id (FE1, #15326's race) within the default seeds. */
    @Test
    @DisplayName("self-test: with no fix on it finds the id-reuse races")
    void withoutTheFixesItFindsTheIdReuseRaces() {
        for (long seed = 0; seed < SEEDS; seed++) {
            String broken = run(seed, FixSet.none());
            if (broken != null) {
                assertTrue(broken.contains(ViolationKind.DUPLICATE_LIVE_REQUEST.name()), broken);
                System.out.println("frontend fuzzing, no fix on: " + broken);
                return;
            }
        }
        fail("no seed of " + SEEDS + " found a race with every fix off");
    }
}
