package vllmrace.hunt;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import vllmrace.hunt.HuntRequest.Source;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.fix.Fix;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.InputProcessor;
import vllmrace.races.Clean;
import vllmrace.races.ModellingError;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;
import vllmrace.races.Violating;
import vllmrace.races.scheduler.EngineCoreRig;

/**
 * A {@link HuntProgram} as a two-actor scenario over one EngineCore process ({@link EngineCoreRig}: the input thread,
 * the busy loop with async scheduling, the scheduler over a block pool, a KV connector), so the step enumerator explores
 * it as it does a catalogued race. The client's ids become engine ids as the frontend makes them: the id itself, or
 * with {@link Fix#UNIQUE_INTERNAL_IDS} (#27987) and randomization not disabled the id plus a suffix per ADD
 * ({@link InputProcessor#assignRequestId}); an ABORT names the engine id of the
 * client's current request under that id. The arbiter writes every pending chunk (the environment's writes do complete),
 * settles the engine, and judges: any detector finding is a violation.
 */
public final class HuntScenario extends RigScenario<EngineCoreRig> {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("no detector fired, liveness included") CLEAN,
        @Violating(value = "a detector fired", anyDetector = true) VIOLATION,
        @ModellingError("an actor raised, or the engine never settled: a modelling error") MODEL_ERROR
    }

    private final HuntProgram program;
    private final Map<String, String> engineIds = new HashMap<>();
    private final Map<String, Integer> adds = new HashMap<>();
    private final java.util.Set<String> abortedByClient = new java.util.HashSet<>();

    public HuntScenario(HuntProgram program, FixSet fixes, Configuration configuration) {
        this(program, new EngineCoreRig(Objects.requireNonNull(fixes, "fixes"), Objects.requireNonNull(configuration, "configuration"),
                program.role().policy(), program.poolBlocks(), program.batchQueue()));
    }

    private HuntScenario(HuntProgram program, EngineCoreRig rig) {
        super(rig, vllmrace.races.Params.DEFAULT);
        this.program = program;
        for (HuntRequest r : program.requests()) {
            add(r);
        }
        for (int i = 0; i < program.setupIterations(); i++) {
            rig.runBusyLoopOnce();
        }
        Coroutine.Builder client = Coroutine.builder(rig.busyLoopEvents(), "client");
        for (HuntOp op : program.actor1()) {
            client.step(describe(op), () -> apply(op));
        }
        EngineCoreRig.BusyLoop loop = rig.busyLoop();
        for (HuntOp op : program.actor2()) {
            if (op.kind() == HuntOp.Kind.ITERATION) {
                loop.iteration();
            } else {
                loop.workerTransfersComplete();
            }
        }
        actors(client.build(), loop.build());
    }

    private HuntRequest spec(String id) {
        return program.requests().stream().filter(r -> r.id().equals(id)).findFirst().orElseThrow();
    }

    /** The client's ADD: a new engine id (with #27987), the connector set up for it, the ADD on the wire. */
    private void add(HuntRequest r) {
        int n = adds.merge(r.id(), 1, Integer::sum);
        String engineId = rig.engineId(r.id(), n);
        engineIds.put(r.id(), engineId);
        int tokens = r.promptTokens(EngineCoreRig.BLOCK_SIZE);
        rig.connector().savePolicy(engineId, r.save());
        if (r.storeJob()) {
            rig.connector().storeWhileRunning(engineId);
        }
        if (r.source() == Source.REMOTE) {
            rig.connector().remotePrefill(engineId, tokens);
        } else if (r.source() == Source.PENDING_CHUNK) {
            rig.connector().chunkBeingWritten(engineId);
        }
        rig.sendAdd(engineId, tokens, r.maxTokens(), r.stopTokenAt());
    }

    /**
     * Whether the frontend still tracks the client's current request under {@code id}: not aborted by the client and no
     * final output received. Without #27987 it refuses a new request under a tracked id.
     */
    private boolean clientTracks(String id) {
        String engineId = engineIds.get(id);
        return !abortedByClient.contains(engineId) && rig.finishReasons(engineId) == null;
    }

    private String describe(HuntOp op) {
        return switch (op.kind()) {
            case ABORT -> "EngineCoreProc.process_input_sockets: ABORT(" + op.target() + ")";
            case READD -> "client resubmits " + op.target() + ": ADD -> EngineCoreProc.process_input_sockets (unless the frontend, "
                    + "without #27987, still tracks " + op.target() + " and refuses it)";
            case CHUNK_WRITTEN -> "OffloadingConnector: the chunk of " + op.target() + " is written";
            case LOSE_LOAD -> "remote prefill side of " + op.target() + " crashes: its push never comes";
            case STORE_READ -> "KVCacheStoreSendingThread: " + op.target() + "'s store job reads its blocks and PUTs them under its key";
            case TRANSFERS_COMPLETE -> "Worker: in-flight KV transfers complete";
            case ITERATION -> throw new IllegalArgumentException("the client does not iterate the busy loop");
        };
    }

    private void apply(HuntOp op) {
        String engineId = op.target() == null ? null : engineIds.get(op.target());
        switch (op.kind()) {
            case ABORT -> {
                abortedByClient.add(engineId);
                rig.abortArrives(engineId);
            }
            case READD -> {
                String next = rig.engineId(op.target(), adds.getOrDefault(op.target(), 0) + 1);
                if (!clientTracks(op.target()) || !next.equals(engineIds.get(op.target()))) {
                    add(spec(op.target()));
                    rig.engineCore().processInputSockets();
                } // else OutputProcessor.add_request raises "already running" (the same internal id): nothing reaches EngineCore
            }
            case CHUNK_WRITTEN -> {
                if (rig.connector().isChunkBeingWritten(engineId)) {
                    rig.connector().chunkWritten(engineId);
                }
            }
            case LOSE_LOAD -> {
                if (rig.connector().isLoading(engineId)) {
                    rig.connector().loseLoad(engineId);
                }
            }
            case STORE_READ -> {
                if (rig.connector().hasStoreJob(engineId)) {
                    rig.connector().completeStore(engineId);
                }
            }
            case TRANSFERS_COMPLETE -> rig.connector().finishInFlightTransfers();
            case ITERATION -> throw new IllegalArgumentException("the client does not iterate the busy loop");
        }
    }

    /** Unused: the hunt classifies its runs in {@link #arbiter()}, any detector a finding; declared for the one base. */
    @Override
    protected List<vllmrace.races.Ending> endings() {
        return List.of(ending(Outcome.CLEAN));
    }

    @Override
    public Outcome arbiter() {
        rig.connector().writeAllChunks();
        try {
            rig.runToQuiescence(rig.connector()::completeAllStores); // the store thread keeps up while the engine drains
        } catch (IllegalStateException e) {
            return Outcome.MODEL_ERROR;
        }
        if (actorFailed()) {
            return Outcome.MODEL_ERROR;
        }
        return rig.violations().isEmpty() ? Outcome.CLEAN : Outcome.VIOLATION;
    }

    public HuntProgram program() {
        return program;
    }

    /** The ids each schedule's findings name, as the client knows them. */
    public List<String> clientIds() {
        return program.requests().stream().map(HuntRequest::id).toList();
    }
}
