package vllmrace.fuzz;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.deploy.ConfigSwitch;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.Violation;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.scheduler.EngineCoreRig;

/**
 * Sequential fuzzing of one EngineCore process (scheduler, KV-cache manager, block pool, a KV connector): seeded
 * random sequences of what the outside world can do to it (ADDs of client ids resubmitted and re-used, ABORTs of live,
 * finished and never-sent ids, remote prefills, a lost load and its client's timeout abort, busy-loop iterations, transfer
 * completions), run one after
 * another on one thread, with every fix ON. No race can happen here (nothing is concurrent), so any detector finding
 * is a model bug, as is an operation raising, a block neither free nor used, or anything left after the engine settles.
 * A failure prints its seed and the shortest sub-sequence that still fails. {@code -Dvllmrace.fuzz.seeds=N} runs more.
 */
@DisplayName("engine fuzzing, sequential, every fix on")
class EngineFuzzTest {
    private static final int SEEDS = Integer.getInteger("vllmrace.fuzz.seeds", 300);
    private static final int OPS = 60;
    private static final String[] CLIENT_IDS = {"a", "b", "c"};
    /** Busy-loop iterations the engine gets to finish a program's requests: 60 operations add at most 60 of up to 4 tokens. */
    private static final int SETTLE_ITERATIONS = 2_000;

    /** One operation the outside world does to the engine. */
    record Op(Kind kind, String client, int promptTokens, int maxTokens, int stopAt) {
        enum Kind { ADD, REMOTE_ADD, ABORT, ABORT_NEVER_SENT, ITERATION, TRANSFERS, LOSE_LOAD }

        @Override
        public String toString() {
            return switch (kind) {
                case ADD, REMOTE_ADD -> kind + "(" + client + ", prompt " + promptTokens + ", max " + maxTokens + ", stop@" + stopAt + ")";
                case ABORT, LOSE_LOAD -> kind + "(" + client + ")";
                default -> kind.toString();
            };
        }
    }

    /** Where a sequence runs: the deployment, the connector's save policy, the pool size. */
    record Setting(Configuration config, SavePolicy savePolicy, int numGpuBlocks) {
    }

    static Setting setting(long seed) {
        Random r = new Random(seed * 31 + 7);
        Configuration config = r.nextBoolean() ? Configuration.DEFAULT : Configuration.of(ConfigSwitch.SYNC_SCHEDULING);
        return new Setting(config, SavePolicy.values()[r.nextInt(SavePolicy.values().length)], 2 + r.nextInt(6));
    }

    /**
     * A program of {@link #OPS} operations whose every request fits the pool on its own (prompt plus max_tokens at most
     * the pool's tokens): upstream refuses at start-up a max_model_len the KV cache cannot hold.
     */
    static List<Op> program(long seed) {
        int poolTokens = setting(seed).numGpuBlocks() * EngineCoreRig.BLOCK_SIZE;
        Random r = new Random(seed);
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < OPS; i++) {
            String client = CLIENT_IDS[r.nextInt(CLIENT_IDS.length)];
            int pick = r.nextInt(20);
            Op.Kind kind = pick < 5 ? Op.Kind.ADD : pick < 7 ? Op.Kind.REMOTE_ADD : pick < 10 ? Op.Kind.ABORT
                    : pick < 11 ? Op.Kind.ABORT_NEVER_SENT : pick < 17 ? Op.Kind.ITERATION : pick < 19 ? Op.Kind.TRANSFERS : Op.Kind.LOSE_LOAD;
            int maxTokens = 1 + r.nextInt(4);
            int promptTokens = 1 + r.nextInt(poolTokens - maxTokens);
            ops.add(new Op(kind, client, promptTokens, maxTokens, r.nextInt(maxTokens + 1)));
        }
        return ops;
    }

    /** Runs {@code ops} in {@code setting}; the first broken invariant, or null. */
    static String run(Setting setting, List<Op> ops) {
        return run(FixSet.all(), setting, ops);
    }

    /** As {@link #run(Setting, List)} with {@code fixes} ON. */
    static String run(FixSet fixes, Setting setting, List<Op> ops) {
        EngineCoreRig rig = new EngineCoreRig(fixes, setting.config(), setting.savePolicy(), setting.numGpuBlocks());
        Map<String, Integer> adds = new HashMap<>();
        Map<String, String> current = new HashMap<>();
        int step = 0;
        try {
            for (Op op : ops) {
                step++;
                switch (op.kind()) {
                    case ADD, REMOTE_ADD -> {
                        String id = rig.engineId(op.client(), adds.merge(op.client(), 1, Integer::sum));
                        if (op.kind() == Op.Kind.REMOTE_ADD) {
                            rig.connector().remotePrefill(id, op.promptTokens());
                        }
                        rig.sendAdd(id, op.promptTokens(), op.maxTokens(), op.stopAt());
                        current.put(op.client(), id);
                    }
                    case ABORT -> rig.sendAbort(current.getOrDefault(op.client(), "never-" + op.client()));
                    case ABORT_NEVER_SENT -> rig.sendAbort("never-sent");
                    case ITERATION -> rig.runBusyLoopOnce();
                    case TRANSFERS -> rig.connector().finishInFlightTransfers();
                    case LOSE_LOAD -> { // the prefill instance dies with the load in flight; the client times out and aborts
                        String id = current.get(op.client());
                        if (id != null && rig.connector().isLoading(id)) {
                            rig.connector().loseLoad(id);
                            rig.sendAbort(id);
                        }
                    }
                }
                String broken = invariants(rig, setting.numGpuBlocks());
                if (broken != null) {
                    return "after step " + step + " (" + op + "): " + broken;
                }
            }
            rig.connector().writeAllChunks();
            for (int i = 0; i < SETTLE_ITERATIONS && !(rig.engineCore().isIdle() && !rig.scheduler().hasRequests() && rig.connector().isIdle()); i++) {
                rig.connector().finishInFlightTransfers();
                rig.runBusyLoopOnce();
            }
            rig.runToQuiescence(); // the detectors at quiescence, and LV1/LV2 if the engine is stuck
        } catch (RuntimeException e) {
            return "step " + step + " raised " + e;
        }
        String broken = invariants(rig, setting.numGpuBlocks());
        if (broken != null) {
            return "at quiescence: " + broken;
        }
        return rig.allFreed() ? null : "at quiescence: not everything freed: requests " + rig.scheduler().requestsSnapshot()
                + ", used blocks " + rig.blockPool().numUsedBlocks();
    }

    /** What must hold after every operation: no detector finding, and every block either free or used. */
    static String invariants(EngineCoreRig rig, int numGpuBlocks) {
        List<Violation> found = rig.violations().all();
        if (!found.isEmpty()) {
            return "a detector fired: " + found;
        }
        int free = rig.blockPool().numFreeBlocks();
        int used = rig.blockPool().numUsedBlocks();
        if (free < 0 || used < 0 || free + used != numGpuBlocks) {
            return "blocks not conserved: free " + free + " + used " + used + " != " + numGpuBlocks;
        }
        return null;
    }

    /** The shortest sub-sequence (greedy, one op out at a time) that still fails. */
    static List<Op> shrink(Setting setting, List<Op> ops) {
        return shrink(FixSet.all(), setting, ops);
    }

    static List<Op> shrink(FixSet fixes, Setting setting, List<Op> ops) {
        return Shrink.greedy(ops, w -> run(fixes, setting, w) != null);
    }

    @Test
    @DisplayName("no operation sequence breaks an invariant with every fix on")
    void noSequenceBreaksAnInvariant() {
        long operations = 0;
        for (long seed = 0; seed < SEEDS; seed++) {
            Setting setting = setting(seed);
            List<Op> ops = program(seed);
            String broken = run(setting, ops);
            if (broken != null) {
                List<Op> shortest = shrink(setting, ops);
                fail("seed " + seed + " " + setting + ": " + broken + "\nshortest failing sequence (" + shortest.size() + " ops): "
                        + shortest + "\n  which fails " + run(setting, shortest));
            }
            operations += ops.size();
        }
        System.out.println("engine fuzzing: " + SEEDS + " seeds, " + operations + " operations, every invariant held");
        assertTrue(operations == (long) SEEDS * OPS, "every seed ran its " + OPS + " operations");
    }

    /**
     * The fuzzer finds what it is for: with #49675 off (every other fix on), it finds #49674's zero-progress preemption
     * cascade within the default seeds and shrinks it to two ADDs: under #45357's deferral, in a pool too small for both,
     * each preemption frees nothing now, the request preempts the other and itself, and the next step re-admits both.
     */
    @Test
    @DisplayName("self-test: without #49675 it finds #49674's preemption cascade")
    void withoutTheFixItFindsThePreemptionCascade() {
        FixSet without = FixSet.all().without(Fix.STOP_PREEMPTION_AT_FENCED_VICTIM);
        for (long seed = 0; seed < SEEDS; seed++) {
            Setting setting = setting(seed);
            List<Op> ops = program(seed);
            String broken = run(without, setting, ops);
            if (broken != null) {
                List<Op> shortest = shrink(without, setting, ops);
                String again = run(without, setting, shortest);
                assertTrue(again.contains("no quiescence") && again.contains("preempted"), again);
                assertTrue(shortest.size() <= 4, "shrunk to " + shortest);
                assertNull(run(FixSet.all(), setting, shortest), "#49675 on: the same sequence drains");
                System.out.println("engine fuzzing without #49675: seed " + seed + " " + setting + ", shrunk to " + shortest);
                return;
            }
        }
        fail("no seed of " + SEEDS + " found the cascade with #49675 off");
    }

    /** The invariant check can fail: a block freed twice by hand is a detector finding. */
    @Test
    @DisplayName("self-test: a broken invariant is found")
    void aBrokenInvariantIsFound() {
        EngineCoreRig rig = new EngineCoreRig(FixSet.all(), Configuration.DEFAULT, SavePolicy.NEVER, 2);
        rig.sendAdd("x", 4, 2);
        rig.runBusyLoopOnce();
        var blocks = rig.kvCacheManager().popBlocksForFree("x");
        rig.blockPool().freeBlocks(blocks);
        rig.blockPool().freeBlocks(blocks);
        String broken = invariants(rig, 2);
        assertTrue(broken != null && broken.contains("detector fired"), String.valueOf(broken));
    }
}
