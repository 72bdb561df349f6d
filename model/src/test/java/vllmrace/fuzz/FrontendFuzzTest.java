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
 * frontend and EngineCore agree (FE3, FE4, SC5 at quiescence). A failure prints its seed and the shortest sub-sequence that
 * still fails; {@code -Dvllmrace.fuzz.seeds=N} runs more.
 */
@DisplayName("frontend fuzzing, sequential, every fix on")
class FrontendFuzzTest {
    private static final int SEEDS = Integer.getInteger("vllmrace.fuzz.seeds", 300);
    private static final int OPS = 40;
    private static final String[] CLIENT_IDS = {"x", "y"};
    private static final int DRAIN_ITERATIONS = 400;

    /** One thing a client or the engine does; {@code id} is the client id an add or abort names. */
    record Op(Kind kind, String id, int n, int maxTokens) {
        enum Kind { ADD, ABORT, ITERATION, OUTPUT_HANDLER }

        @Override
        public String toString() {
            return switch (kind) {
                case ADD -> "add_request(" + id + ", n=" + n + ", max_tokens=" + maxTokens + ")";
                case ABORT -> "abort(" + id + ")";
                case ITERATION -> "engine iteration";
                case OUTPUT_HANDLER -> "output handler";
            };
        }
    }

    /** Seed {@code seed}'s connector save policy (odd seeds), or null (even seeds: no KV connector). */
    static SavePolicy savePolicy(long seed) {
        return seed % 2 == 0 ? null : SavePolicy.values()[new Random(seed).nextInt(SavePolicy.values().length)];
    }

    /** Seed {@code seed}'s {@link #OPS} operations. */
    static List<Op> program(long seed) {
        Random r = new Random(seed);
        if (seed % 2 != 0) {
            r.nextInt(SavePolicy.values().length); // the save policy's draw
        }
        List<Op> ops = new ArrayList<>();
        for (int step = 1; step <= OPS; step++) {
            String client = CLIENT_IDS[r.nextInt(CLIENT_IDS.length)];
            int pick = r.nextInt(10);
            if (pick < 3) {
                int n = 1 + r.nextInt(2);
                ops.add(new Op(Op.Kind.ADD, client, n, 1 + r.nextInt(4)));
            } else if (pick < 5) {
                ops.add(new Op(Op.Kind.ABORT, r.nextInt(6) == 0 ? "never-added" : client, 0, 0));
            } else {
                ops.add(new Op(pick < 8 ? Op.Kind.ITERATION : Op.Kind.OUTPUT_HANDLER, client, 0, 0));
            }
        }
        return ops;
    }

    /** Runs seed {@code seed}'s program; the first broken invariant, or null. */
    static String run(long seed, FixSet fixes) {
        return run(seed, fixes, program(seed));
    }

    /** Runs {@code ops} on seed {@code seed}'s instance; the first broken invariant, or null. */
    static String run(long seed, FixSet fixes, List<Op> ops) {
        SavePolicy policy = savePolicy(seed);
        VllmInstance vllm = policy == null ? new VllmInstance(fixes, Configuration.DEFAULT)
                : new VllmInstance(fixes, Configuration.DEFAULT, policy, 16);
        List<RequestOutputCollector> callers = new ArrayList<>();
        int step = 0;
        for (Op op : ops) {
            step++;
            RuntimeException raised;
            switch (op.kind()) {
                case ADD -> {
                    String before = vllm.outputProcessor().requestStatesSnapshot().toString();
                    Coroutine<RequestOutputCollector> add = vllm.asyncLlm().addRequest(op.id(), new SamplingParams(op.n(), op.maxTokens(), 0)).run();
                    raised = add.failure();
                    if (raised instanceof RequestAlreadyRunningException) {
                        if (!before.equals(vllm.outputProcessor().requestStatesSnapshot().toString())) {
                            return "seed " + seed + " step " + step + " " + op + ": rejected, but the frontend's state changed";
                        }
                        raised = null;
                    } else if (raised == null) {
                        callers.add(add.join());
                    }
                }
                case ABORT -> raised = vllm.asyncLlm().abort(op.id()).run().failure();
                case ITERATION -> raised = attempt(() -> iterate(vllm));
                default -> raised = vllm.asyncLlm().outputHandler().run().failure();
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

    /** The shortest sub-sequence of {@code ops} that still fails on seed {@code seed}'s instance. */
    static List<Op> shrink(long seed, FixSet fixes, List<Op> ops) {
        return Shrink.greedy(ops, w -> run(seed, fixes, w) != null);
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
                List<Op> shortest = shrink(seed, FixSet.all(), program(seed));
                fail(broken + "\nshortest failing sequence (" + shortest.size() + " ops): " + shortest + "\n  which fails "
                        + run(seed, FixSet.all(), shortest));
            }
        }
        System.out.println("frontend fuzzing: " + SEEDS + " seeds, " + SEEDS * OPS + " operations, every invariant held");
    }

    /**
     * It finds what it is for: with no fix on, a re-add under a live id (FE1, #15326's race) within the default seeds.
     * #51629's proposal stays on: without it an abort by the client's id of an {@code n > 1} request leaves its parent
     * (ParentRequestLeakOnAbort, FE4), a race of its own that would otherwise be found first.
     */
    @Test
    @DisplayName("self-test: with no id-reuse fix on it finds the id-reuse races")
    void withoutTheFixesItFindsTheIdReuseRaces() {
        FixSet noIdReuseFix = FixSet.of(java.util.List.of(vllmrace.model.fix.Fix.PARENT_RELEASED_ON_ABORT));
        for (long seed = 0; seed < SEEDS; seed++) {
            String broken = run(seed, noIdReuseFix);
            if (broken != null) {
                assertTrue(broken.contains(ViolationKind.DUPLICATE_LIVE_REQUEST.name()), broken);
                long found = seed;
                String kind = ViolationKind.DUPLICATE_LIVE_REQUEST.name(); // shrink to this race, not to any other of no fix on
                List<Op> shortest = Shrink.greedy(program(seed), w -> {
                    String b = run(found, noIdReuseFix, w);
                    return b != null && b.contains(kind);
                });
                String again = run(seed, noIdReuseFix, shortest);
                assertTrue(again != null && shortest.size() < OPS, "shrunk and still failing: " + shortest);
                assertTrue(shortest.stream().filter(op -> op.kind() == Op.Kind.ADD).count() >= 2, "a re-add is part of it: " + shortest);
                System.out.println("frontend fuzzing, no fix on: " + broken + "\n  shrunk to " + shortest + "\n  " + again);
                return;
            }
        }
        fail("no seed of " + SEEDS + " found a race with every fix off");
    }
}
