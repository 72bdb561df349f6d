package vllmrace.races.scheduler;

import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.Scheduler;
import vllmrace.races.EngineRig;

/**
 * One EngineCore process of the scheduler races: the {@link EngineRig} wiring with a {@link TestAsyncConnector} whose
 * transfers complete when the scenario says so, and the client's ABORT and the busy loop as actors.
 *
 * <p>The scenario's actors are {@link Coroutine}s on one {@link EventLoop}: here it stands for the busy loop's
 * serialisation. Everything the scheduler does runs on the busy-loop thread, so its steps never overlap; the
 * input thread only enqueues, so its one step (an ABORT arriving) is atomic too. The interleavings JCStress and
 * Lincheck explore are therefore exactly where an ABORT can land between two busy-loop calls.
 */
public final class EngineCoreRig extends EngineRig {
    private final TestAsyncConnector connector;

    public EngineCoreRig(FixSet fixes, TestAsyncConnector.SavePolicy savePolicy, int numGpuBlocks) {
        this(fixes, Configuration.DEFAULT, savePolicy, numGpuBlocks, BATCH_QUEUE_SIZE);
    }

    /** As {@link #EngineCoreRig(FixSet, TestAsyncConnector.SavePolicy, int)} under a deployment's configuration. */
    public EngineCoreRig(FixSet fixes, Configuration config, TestAsyncConnector.SavePolicy savePolicy, int numGpuBlocks) {
        this(fixes, config, savePolicy, numGpuBlocks, BATCH_QUEUE_SIZE);
    }

    /**
     * As {@link #EngineCoreRig(FixSet, Configuration, TestAsyncConnector.SavePolicy, int)} with a deeper batch queue:
     * {@code batch_queue_size} is {@code max_concurrent_batches}, more than 2 with pipeline parallelism, so schedule(N+2)
     * also runs before update_from_output(N).
     */
    public EngineCoreRig(FixSet fixes, Configuration config, TestAsyncConnector.SavePolicy savePolicy, int numGpuBlocks,
                         int batchQueueSize) {
        super(fixes, config, numGpuBlocks, batchQueueSize);
        connector = new TestAsyncConnector(wiring().kvCacheManager(), savePolicy, fixes);
        wire(connector, scheduler -> connector);
    }

    @Override
    protected void finishInFlightTransfers() {
        connector.finishInFlightTransfers();
    }

    @Override
    protected boolean transfersIdle() {
        return connector.isIdle();
    }

    @Override
    public int requestFinishedCalls(String requestId) {
        return connector.requestFinishedCalls(requestId);
    }

    @Override
    protected String transfersSignature() {
        return connector.progressSignature();
    }

    /**
     * Actor: the client's ABORT(id) reaches EngineCore. One step of the input thread
     * ({@code process_input_sockets}): into {@code input_queue}, and with #29987 into {@code aborts_queue}.
     */
    public Coroutine<Void> clientAbort(String requestId) {
        return event("client ABORT(" + requestId + ")",
                "EngineCoreProc.process_input_sockets: ABORT(" + requestId + ") -> input_queue, aborts_queue",
                () -> abortArrives(requestId));
    }

    /** A client id sent twice: the engine ids the frontend gives its first and its second ADD (one id without #27987). */
    public record Resubmission(String first, String second) {
        /** Whether both ADDs share one engine id (ids not unique): their outputs share its record. */
        public boolean sameId() {
            return first.equals(second);
        }
    }

    /** The engine ids of {@code clientId}'s first and second ADD in this deployment ({@link #engineId}). */
    public Resubmission resubmission(String clientId) {
        return new Resubmission(engineId(clientId, 1), engineId(clientId, 2));
    }

    /**
     * Actor: the client cancels its first request and resubmits the same client id: ABORT(first) then ADD(second) reach
     * the input thread, one atomic step each.
     */
    public Coroutine<Void> clientAbortThenResubmit(String task, Resubmission ids, int numPromptTokens, int maxTokens) {
        return Coroutine.builder(busyLoopEvents(), task)
                .step("EngineCoreProc.process_input_sockets: ABORT(" + ids.first() + ") -> input_queue, aborts_queue",
                        () -> abortArrives(ids.first()))
                .step("EngineCoreProc.process_input_sockets: ADD(" + ids.second() + ") -> input_queue", () -> {
                    sendAdd(ids.second(), numPromptTokens, maxTokens);
                    engineCore().processInputSockets();
                })
                .build();
    }

    /** Actor: a worker event, one atomic step: every in-flight KV transfer completes (as {@code get_finished} will report). */
    public Coroutine<Void> worker(String what) {
        return event("worker", what, connector::finishInFlightTransfers);
    }

    /** The busy loop as an actor: add iterations and worker events in program order, then build. */
    public BusyLoop busyLoop() {
        return new BusyLoop(Coroutine.builder(busyLoopEvents(), "EngineCore busy loop"));
    }

    /** Builds the busy-loop actor's steps. */
    public final class BusyLoop {
        private final Coroutine.Builder builder;

        private BusyLoop(Coroutine.Builder builder) {
            this.builder = builder;
        }

        /**
         * One iteration of {@code run_busy_loop}: {@code _process_input_queue}; {@code step_with_batch_queue}'s
         * {@code schedule()} of step N+1; then, if the loop blocks on the oldest step N, its result,
         * {@code _process_aborts_queue} and {@code update_from_output(N)} (nothing when it does not block).
         */
        public BusyLoop iteration() {
            boolean[] blocks = new boolean[1];
            builder.step("EngineCoreProc._process_input_queue", engineCore()::processInputQueue)
                    .step("step_with_batch_queue: Scheduler.schedule + execute_model", () -> blocks[0] = engineCore().scheduleBatch())
                    .step("step_with_batch_queue: future.result, _process_aborts_queue, Scheduler.update_from_output", () -> {
                        if (blocks[0]) {
                            engineCore().processOldestBatch();
                            collectOutputs();
                        }
                    });
            return this;
        }

        /** The remaining part of an iteration whose first steps ran in the set-up. */
        public BusyLoop processOldestBatch() {
            builder.step("step_with_batch_queue: future.result, _process_aborts_queue, Scheduler.update_from_output", () -> {
                engineCore().processOldestBatch();
                collectOutputs();
            });
            return this;
        }

        /**
         * With one batch in flight, the rest of {@code EngineCore.step} after {@link #dispatchStep()}: the result,
         * {@code _process_aborts_queue} and {@code update_from_output}; nothing with the AsyncScheduler, whose next
         * {@link #iteration()} processes the oldest step once it blocks on it.
         */
        public BusyLoop finishStepInFlight() {
            return oneBatchInFlight() ? processOldestBatch() : this;
        }

        /** A worker event: every in-flight async load/save completes (reported by the next {@code get_finished}). */
        public BusyLoop workerTransfersComplete() {
            builder.step("Worker: in-flight KV transfers complete", connector::finishInFlightTransfers);
            return this;
        }

        public Coroutine<Void> build() {
            return builder.build();
        }
    }

    public TestAsyncConnector connector() {
        return connector;
    }
}
