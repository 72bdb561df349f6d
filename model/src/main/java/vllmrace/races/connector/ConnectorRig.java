package vllmrace.races.connector;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.multi.ChildConnector;
import vllmrace.model.connector.multi.KvOutputAggregator;
import vllmrace.model.connector.multi.MultiConnector;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.races.EngineRig;

/**
 * One EngineCore of the connector races (lifecycle §3), decode side (the NIXL push producer's races: prefill side): the {@link EngineRig} wiring whose connector is a
 * {@link MultiConnector} of the children the scenario builds, with one worker per PCP rank (world size 1 unless a scenario says) behind a
 * {@link KvOutputAggregator}. A worker transfer completing is one atomic step.
 */
public final class ConnectorRig extends EngineRig {
    private final List<ChildConnector> children;
    private final MultiConnector multiConnector;
    private KvOutputAggregator aggregator;

    /** @param children builds the MultiConnector's children, in config order, over the rig's KV-cache manager */
    public ConnectorRig(FixSet fixes, int numGpuBlocks, Function<KvCacheManager, List<ChildConnector>> children) {
        this(fixes, Configuration.DEFAULT, numGpuBlocks, children);
    }

    /** As {@link #ConnectorRig(FixSet, int, Function)} under a deployment's configuration (its scheduler class). */
    public ConnectorRig(FixSet fixes, Configuration config, int numGpuBlocks, Function<KvCacheManager, List<ChildConnector>> children) {
        this(fixes, config, numGpuBlocks, 1, children);
    }

    /**
     * As {@link #ConnectorRig(FixSet, Configuration, int, Function)} with one worker per prefill-context-parallel rank
     * ({@code pcpSize}, the world size here), aggregated over {@code get_finished_count() or world_size} as
     * {@code KVOutputAggregator.from_connector} does.
     */
    public ConnectorRig(FixSet fixes, Configuration config, int numGpuBlocks, int pcpSize,
                        Function<KvCacheManager, List<ChildConnector>> children) {
        super(fixes, config, numGpuBlocks, BATCH_QUEUE_SIZE);
        this.children = List.copyOf(children.apply(wiring().kvCacheManager()));
        multiConnector = new MultiConnector(fixes, vllmrace.model.connector.KvRole.KV_BOTH, this.children, pcpSize);
        wire(multiConnector, scheduler -> aggregator = new KvOutputAggregator(multiConnector.rankWorkers(),
                multiConnector.getFinishedCount(), wiring().violations(), scheduler::requestNamed));
    }

    @Override
    protected void finishInFlightTransfers() {
        children.forEach(ChildConnector::finishInFlightTransfers);
    }

    @Override
    protected boolean transfersIdle() {
        return children.stream().allMatch(ChildConnector::isIdle);
    }

    @Override
    public int requestFinishedCalls(String requestId) {
        return multiConnector.requestFinishedCalls(requestId);
    }

    @Override
    protected String transfersSignature() {
        return children.stream().map(ChildConnector::progressSignature).toList().toString();
    }

    /** A coroutine of the busy loop's iterations and worker events, in program order. */
    public Actor actor(String task) {
        return new Actor(Coroutine.builder(busyLoopEvents(), task));
    }

    /** Builds an actor's steps. */
    public final class Actor {
        private final Coroutine.Builder builder;

        private Actor(Coroutine.Builder builder) {
            this.builder = builder;
        }

        /**
         * One iteration of {@code run_busy_loop} as one atomic step: {@code _process_input_queue}, then
         * {@code step_with_batch_queue} (schedule N+1; if the loop blocks, get_finished and update_from_output of N).
         * The connector races have no input-thread actor, so a finer split allows no other outcome.
         */
        public Actor iteration() {
            builder.step("EngineCore.run_busy_loop: _process_input_queue + step_with_batch_queue", () -> {
                runBusyLoopOnce();
            });
            return this;
        }

        /** A worker event (one atomic step). */
        public Actor worker(String upstream, Runnable event) {
            builder.step(upstream, event);
            return this;
        }

        public Coroutine<Void> build() {
            return builder.build();
        }
    }

    public MultiConnector multiConnector() {
        return multiConnector;
    }

    public KvOutputAggregator aggregator() {
        return aggregator;
    }

    public List<ChildConnector> children() {
        return new ArrayList<>(children);
    }
}
