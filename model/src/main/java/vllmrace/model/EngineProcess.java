package vllmrace.model;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.connector.KvConnectorBaseV1;
import vllmrace.model.connector.KvConnectorWorker;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.Fifo;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.KvLoadFailurePolicy;
import vllmrace.model.sched.Scheduler;

/**
 * The one wiring of an EngineCore process ({@code EngineCoreProc} in vllm/v1/engine/core.py): its input and output
 * sockets, {@link EngineCore} with its batch queue, the {@link Scheduler} of the deployment's class, and where the
 * process has KV-cache accounting a {@link KvCacheManager} over a {@link BlockPool} of {@link #BLOCK_SIZE}-token blocks
 * and a KV connector with its worker side; one {@link ViolationLog} and one {@link StepLog} for all of it. Built in
 * steps ({@link #builder}): the fixes and the deployment, then the pool, then the batch-queue depth, then the connector.
 * The frontend's {@link VllmInstance} and the races' rigs are built on it, so the engine is wired once.
 */
public final class EngineProcess implements Wired {
    /** Tokens per KV block. */
    public static final int BLOCK_SIZE = 4;

    private final FixSet fixes;
    private final Configuration config;
    private final ViolationLog violations;
    private final StepLog stepLog;
    private final Fifo<EngineCoreMessage> inputSocket = new Fifo<>();
    private final Fifo<List<EngineCoreOutput>> outputSocket = new Fifo<>();
    private final BlockPool blockPool;
    private final KvCacheManager kvCacheManager;
    private final KvConnectorBaseV1 connector;
    private final Scheduler scheduler;
    private final EngineCore engineCore;
    private final int batchQueueSize;

    private EngineProcess(Builder b, KvConnectorBaseV1 connector, Function<Scheduler, KvConnectorWorker> worker) {
        this.fixes = b.fixes;
        this.config = b.config;
        this.violations = b.violations;
        this.stepLog = b.stepLog;
        this.blockPool = b.blockPool;
        this.kvCacheManager = b.kvCacheManager;
        this.connector = connector;
        this.batchQueueSize = b.batchQueueSize;
        this.scheduler = new Scheduler(fixes, violations, kvCacheManager, connector, KvLoadFailurePolicy.FAIL, config.schedulerKind(),
                batchQueueSize);
        // without a connector, the frontend model's engine: EngineCore.step, no aborts queue (as the frontend races model it)
        this.engineCore = connector == null
                ? new EngineCore(scheduler, inputSocket, outputSocket, violations, stepLog)
                : new EngineCore(scheduler, inputSocket, outputSocket, violations, stepLog, worker == null ? null : worker.apply(scheduler),
                        batchQueueSize);
    }

    /** The first step: which fixes are ON, under which deployment (its scheduler class). */
    public static Builder builder(FixSet fixes, Configuration config) {
        return new Builder(fixes, config);
    }

    /** The steps of an {@link EngineProcess}; each may be left at its default (no KV cache, one batch in flight, no connector). */
    public static final class Builder {
        private final FixSet fixes;
        private final Configuration config;
        private ViolationLog violations = new ViolationLog();
        private StepLog stepLog = new StepLog();
        private BlockPool blockPool;
        private KvCacheManager kvCacheManager;
        private int batchQueueSize = 1;
        private boolean built;

        private Builder(FixSet fixes, Configuration config) {
            this.fixes = Objects.requireNonNull(fixes, "fixes");
            this.config = Objects.requireNonNull(config, "config");
        }

        /**
         * KV-cache accounting: a pool of {@code numGpuBlocks} blocks of {@link #BLOCK_SIZE} tokens.
         *
         * @throws IllegalArgumentException for {@code numGpuBlocks < 1}
         */
        public Builder kvCache(int numGpuBlocks) {
            if (numGpuBlocks < 1) {
                throw new IllegalArgumentException("numGpuBlocks must be >= 1, got " + numGpuBlocks);
            }
            blockPool = new BlockPool(numGpuBlocks, violations);
            kvCacheManager = new KvCacheManager(blockPool, BLOCK_SIZE, violations);
            return this;
        }

        /**
         * Steps EngineCore keeps in flight ({@code batch_queue_size}: 1 for {@code EngineCore.step}, 2 or more for
         * {@code step_with_batch_queue}).
         *
         * @throws IllegalArgumentException for {@code size < 1}
         */
        /**
         * Another process of one deployment (a data-parallel rank): it logs its steps and detector findings to
         * {@code first}'s logs, so a run's interleaving and verdict cover every process. Call before {@link #kvCache}.
         *
         * @throws IllegalStateException after {@link #kvCache}, whose pool records to this builder's own log
         */
        public Builder sharingLogsWith(EngineProcess first) {
            Objects.requireNonNull(first, "first");
            if (blockPool != null) {
                throw new IllegalStateException("share the logs before kvCache(numGpuBlocks)");
            }
            violations = first.violations();
            stepLog = first.stepLog();
            return this;
        }

        public Builder batchQueueSize(int size) {
            if (size < 1) {
                throw new IllegalArgumentException("batchQueueSize must be >= 1, got " + size);
            }
            batchQueueSize = size;
            return this;
        }

        /** The KV-cache manager a connector is built over ({@link #kvCache} first), its stores and loads land in its pool. */
        public KvCacheManager kvCacheManager() {
            if (kvCacheManager == null) {
                throw new IllegalStateException("no KV cache: call kvCache(numGpuBlocks) first");
            }
            return kvCacheManager;
        }

        public FixSet fixes() {
            return fixes;
        }

        public Configuration config() {
            return config;
        }

        /** The block pool of {@link #kvCache}, or null before it. */
        public BlockPool blockPool() {
            return blockPool;
        }

        /** The detectors' log, for a connector or frontend built beside the engine. */
        public ViolationLog violations() {
            return violations;
        }

        /** The step log, for the frontend's event loop. */
        public StepLog stepLog() {
            return stepLog;
        }

        /** The process without a KV connector. */
        public EngineProcess build() {
            return build(null, null);
        }

        /**
         * The process with {@code connector} in the scheduler and {@code worker} (built once the scheduler exists: an
         * aggregator looks requests up in it) reporting the worker side's finished transfers to EngineCore.
         */
        public EngineProcess build(KvConnectorBaseV1 connector, Function<Scheduler, KvConnectorWorker> worker) {
            if (built) {
                throw new IllegalStateException("this builder built its process already");
            }
            if (connector != null && kvCacheManager == null) {
                throw new IllegalStateException("a KV connector needs the KV cache: call kvCache(numGpuBlocks) first");
            }
            if (connector == null && batchQueueSize != 1) {
                throw new IllegalStateException("without a KV connector EngineCore steps one batch at a time, not " + batchQueueSize);
            }
            built = true;
            return new EngineProcess(this, connector, worker);
        }
    }

    /** Itself: the process is wired on itself. */
    @Override
    public EngineProcess process() {
        return this;
    }

    public FixSet fixes() {
        return fixes;
    }

    public Configuration config() {
        return config;
    }

    @Override
    public ViolationLog violations() {
        return violations;
    }

    @Override
    public StepLog stepLog() {
        return stepLog;
    }

    public Fifo<EngineCoreMessage> inputSocket() {
        return inputSocket;
    }

    public Fifo<List<EngineCoreOutput>> outputSocket() {
        return outputSocket;
    }

    @Override
    public BlockPool blockPool() {
        return blockPool;
    }

    @Override
    public KvCacheManager kvCacheManager() {
        return kvCacheManager;
    }

    /** The scheduler's KV connector, or null. */
    public KvConnectorBaseV1 connector() {
        return connector;
    }

    @Override
    public Scheduler scheduler() {
        return scheduler;
    }

    @Override
    public EngineCore engineCore() {
        return engineCore;
    }

    public int batchQueueSize() {
        return batchQueueSize;
    }
}
