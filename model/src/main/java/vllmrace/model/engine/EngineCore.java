package vllmrace.model.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.connector.KvConnectorWorker;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.sched.ModelRunnerOutput;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;
import vllmrace.model.sched.Scheduler;
import vllmrace.model.sched.SchedulerOutput;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Mirrors {@code vllm/v1/engine/core.py} (commit ac3cb2e2): {@code EngineCoreProc.process_input_sockets} (the
 * input thread: every message to {@code input_queue}, an ABORT also to {@code aborts_queue} since #29987),
 * {@code _process_input_queue} and {@code _handle_client_request} (ADD → {@code add_request}, ABORT →
 * {@code abort_requests}), {@code _process_aborts_queue}, {@code EngineCore.step} (schedule → execute →
 * [aborts] → {@code update_from_output}) and {@code step_with_batch_queue} (async scheduling: {@code schedule()}
 * for step N+1 runs before {@code update_from_output} for step N).
 *
 * <p>Two configurations. The frontend model's engine ({@link #EngineCore(Scheduler, Fifo, Fifo, ViolationLog,
 * StepLog)}) steps synchronously and has no {@code aborts_queue}: it reuses request ids, and re-applying a queued
 * ABORT after the input queue already applied it and re-added the id would abort the new request, a hazard
 * upstream avoids only by unique internal ids (#27987). The scheduler model's engine ({@link #EngineCore(Scheduler,
 * Fifo, Fifo, ViolationLog, StepLog, KvConnectorWorker, int)}) has a batch queue and, with
 * {@link Fix#EAGER_ABORTS}, the aborts queue.
 *
 * <p>Upstream the busy loop is one thread and the input thread only enqueues; the model serialises every public
 * method on {@code this}. The worker runs each step while the busy loop goes on: a step's future is taken as
 * not done until the busy loop blocks on it, when the worker's connector reports its finished transfers.
 */
public final class EngineCore {
    private final Scheduler scheduler;
    private final Fifo<EngineCoreMessage> inputSocket;
    private final Fifo<List<EngineCoreOutput>> outputSocket;
    private final ViolationLog violations;
    private final StepLog stepLog;
    private final KvConnectorWorker worker;
    private final int batchQueueSize;
    private final boolean abortsQueueEnabled;
    private final Deque<EngineCoreMessage> inputQueue = new ArrayDeque<>();
    private final Deque<EngineCoreMessage.Abort> abortsQueue = new ArrayDeque<>();
    private final Deque<SchedulerOutput> batchQueue = new ArrayDeque<>();
    /** Detector only: ABORTs already applied from {@code aborts_queue} whose copy still waits in {@code input_queue}. */
    private final Set<EngineCoreMessage.Abort> appliedEagerly = Collections.newSetFromMap(new IdentityHashMap<>());

    /** The frontend model's engine: synchronous {@code step()}, no KV connector, no aborts queue. */
    public EngineCore(Scheduler scheduler, Fifo<EngineCoreMessage> inputSocket, Fifo<List<EngineCoreOutput>> outputSocket,
                      ViolationLog violations, StepLog stepLog) {
        this(scheduler, inputSocket, outputSocket, violations, stepLog, null, 1, false);
    }

    /**
     * The scheduler model's engine.
     *
     * @param worker         the worker-side KV connector whose {@code get_finished} feeds each step's output, or null
     * @param batchQueueSize {@code batch_queue_size}: 1 steps synchronously, 2 is async scheduling
     * @throws IllegalArgumentException if {@code batchQueueSize < 1}
     */
    public EngineCore(Scheduler scheduler, Fifo<EngineCoreMessage> inputSocket, Fifo<List<EngineCoreOutput>> outputSocket,
                      ViolationLog violations, StepLog stepLog, KvConnectorWorker worker, int batchQueueSize) {
        this(scheduler, inputSocket, outputSocket, violations, stepLog, worker, batchQueueSize,
                scheduler.fixes().isOn(Fix.EAGER_ABORTS));
    }

    private EngineCore(Scheduler scheduler, Fifo<EngineCoreMessage> inputSocket, Fifo<List<EngineCoreOutput>> outputSocket,
                       ViolationLog violations, StepLog stepLog, KvConnectorWorker worker, int batchQueueSize,
                       boolean abortsQueueEnabled) {
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.inputSocket = Objects.requireNonNull(inputSocket, "inputSocket");
        this.outputSocket = Objects.requireNonNull(outputSocket, "outputSocket");
        this.violations = Objects.requireNonNull(violations, "violations");
        this.stepLog = Objects.requireNonNull(stepLog, "stepLog");
        if (batchQueueSize < 1) {
            throw new IllegalArgumentException("batch_queue_size must be >= 1, got " + batchQueueSize);
        }
        this.worker = worker;
        this.batchQueueSize = batchQueueSize;
        this.abortsQueueEnabled = abortsQueueEnabled;
    }

    /**
     * {@code EngineCoreProc.process_input_sockets}, the input thread: every message received so far goes to
     * {@code input_queue}; with #29987 an ABORT also goes to {@code aborts_queue}.
     */
    public synchronized void processInputSockets() {
        UpstreamPins.enter(UpstreamPin.ENGINE_CORE_PROC_PROCESS_INPUT_SOCKETS);
        for (EngineCoreMessage message : inputSocket.drain()) {
            if (abortsQueueEnabled && message instanceof EngineCoreMessage.Abort abort) {
                abortsQueue.add(abort);
            }
            inputQueue.add(message);
        }
    }

    /**
     * {@code EngineCoreProc._process_input_queue}: applies every message received so far, in wire order (the
     * input thread is taken to have received everything already sent). An ABORT applied here leaves its copy in
     * {@code aborts_queue} (upstream clears that queue only when the engine is idle), which the next
     * {@code _process_aborts_queue} applies again; with {@link Fix#ABORT_APPLIED_ONCE} the copy is dropped.
     */
    public synchronized void processInputQueue() {
        UpstreamPins.enter(UpstreamPin.ENGINE_CORE_PROC_PROCESS_INPUT_QUEUE);
        processInputSockets();
        while (!inputQueue.isEmpty()) {
            EngineCoreMessage message = inputQueue.poll();
            appliedEagerly.remove(message);
            if (message instanceof EngineCoreMessage.Abort abort && scheduler.fixes().isOn(Fix.ABORT_APPLIED_ONCE)) {
                abortsQueue.removeIf(queued -> queued == abort); // applied here: its eager copy must not apply again
            }
            handleClientRequest(message);
        }
    }

    /** {@code EngineCoreProc._handle_client_request}. */
    private void handleClientRequest(EngineCoreMessage message) {
        UpstreamPins.enter(UpstreamPin.ENGINE_CORE_PROC_HANDLE_CLIENT_REQUEST);
        stepLog.record("EngineCore", "_handle_client_request(" + message + ")");
        if (message instanceof EngineCoreMessage.Add add) {
            addRequest(add.request());
        } else if (message instanceof EngineCoreMessage.Abort abort) {
            abortRequests(abort);
        }
    }

    /** {@code EngineCore.add_request} → {@code Scheduler.add_request}. */
    private void addRequest(EngineCoreRequest request) {
        UpstreamPins.enter(UpstreamPin.ENGINE_CORE_ADD_REQUEST);
        Request added = new Request(request.requestId(), request.arrivalTime(), request.numPromptTokens(), request.maxTokens(),
                request.stopTokenAt());
        if (!request.nextChunks().isEmpty()) {
            added.queueChunks(request.nextChunks()); // a resumable session, its later chunks already in streaming_queue
        }
        scheduler.addRequest(added);
    }

    /** {@code EngineCore.abort_requests} → {@code Scheduler.finish_requests(ids, FINISHED_ABORTED)}. */
    private void abortRequests(EngineCoreMessage.Abort abort) {
        UpstreamPins.enter(UpstreamPin.ENGINE_CORE_ABORT_REQUESTS);
        for (Map.Entry<String, Long> target : abort.intendedArrivalTimes().entrySet()) {
            Request held = scheduler.getRequest(target.getKey());
            if (held != null && !held.isFinished() && held.arrivalTime() != target.getValue()) {
                violations.record(ViolationKind.ABORT_HIT_WRONG_REQUEST, target.getKey(),
                        "ABORT sent for " + target.getKey() + "@" + target.getValue() + " finishes " + held);
            }
        }
        scheduler.finishRequests(abort.requestIds(), RequestStatus.FINISHED_ABORTED);
    }

    /**
     * {@code EngineCore._process_aborts_queue} (#29987): applies every queued ABORT now ("only the aborts and not
     * new requests"); their copies in {@code input_queue} are applied again later, a no-op since aborting is
     * idempotent. Nothing to do without {@link Fix#EAGER_ABORTS}.
     */
    public synchronized void processAbortsQueue() {
        UpstreamPins.enter(UpstreamPin.ENGINE_CORE_PROCESS_ABORTS_QUEUE);
        while (!abortsQueue.isEmpty()) {
            EngineCoreMessage.Abort abort = abortsQueue.poll();
            stepLog.record("EngineCore", "_process_aborts_queue(" + abort + ")");
            appliedEagerly.add(abort);
            abortRequests(abort);
        }
    }

    /** One iteration of the busy loop: inputs, then {@code EngineCore.step} (or {@code step_with_batch_queue}). */
    public synchronized void runBusyLoopOnce() {
        UpstreamPins.enter(UpstreamPin.ENGINE_CORE_PROC_RUN_BUSY_LOOP);
        processInputQueue();
        if (batchQueueSize == 1) {
            step();
        } else {
            stepWithBatchQueue();
        }
    }

    /** {@code EngineCore.step}: schedule, execute, {@code _process_aborts_queue}, {@code update_from_output}. */
    public synchronized void step() {
        UpstreamPins.enter(UpstreamPin.ENGINE_CORE_STEP);
        if (!scheduler.hasRequests()) {
            return;
        }
        SchedulerOutput out = scheduler.schedule();
        ModelRunnerOutput modelOutput = ModelRunnerOutput.execute(out, worker);
        processOutput(out, modelOutput);
    }

    /** {@code EngineCore.step_with_batch_queue}: {@link #scheduleBatch()}, then {@link #processOldestBatch()} if it blocks. */
    public synchronized void stepWithBatchQueue() {
        UpstreamPins.enter(UpstreamPin.ENGINE_CORE_STEP_WITH_BATCH_QUEUE);
        if (scheduleBatch()) {
            processOldestBatch();
        }
    }

    /**
     * First half of {@code step_with_batch_queue}: if the scheduler has requests, {@code schedule()} and queue the
     * step for the worker. Returns whether the busy loop now blocks on the oldest step: not while the step ran
     * tokens and the queue has room ("don't block on next worker response unless the queue is full or there are no
     * more requests to schedule").
     */
    public synchronized boolean scheduleBatch() {
        if (scheduler.hasRequests()) {
            SchedulerOutput out = scheduler.schedule();
            stepLog.record("EngineCore", "schedule(" + out.step() + ") " + out.numScheduledTokens().keySet());
            batchQueue.addFirst(out);
            boolean modelExecuted = out.totalNumScheduledTokens() > 0;
            return !(modelExecuted && batchQueue.size() < batchQueueSize);
        }
        return !batchQueue.isEmpty();
    }

    /**
     * Second half of {@code step_with_batch_queue}: pop the oldest step, take its result (the worker's output,
     * with the transfers its connector finished), {@code _process_aborts_queue}, then {@code update_from_output}.
     * The two run back to back on the busy loop: an ABORT arriving between them is one arriving after the update.
     */
    public synchronized void processOldestBatch() {
        SchedulerOutput out = batchQueue.pollLast();
        if (out == null) {
            return;
        }
        processOutput(out, ModelRunnerOutput.execute(out, worker));
    }

    private void processOutput(SchedulerOutput out, ModelRunnerOutput modelOutput) {
        if (abortsQueueEnabled) {
            processAbortsQueue();
        }
        stepLog.record("EngineCore", "update_from_output(" + out.step() + ") " + out.numScheduledTokens().keySet()
                + (modelOutput.kvConnectorOutput().isEmpty() ? "" : " " + modelOutput.kvConnectorOutput()));
        List<EngineCoreOutput> outputs = scheduler.updateFromOutput(out, modelOutput);
        detectAbortOvertaken(out, outputs);
        if (!outputs.isEmpty()) {
            outputSocket.send(outputs);
        }
    }

    /**
     * #29987 detector: a request completed normally although an ABORT for it had already been received and not
     * applied (it waits in {@code input_queue}, and was not applied from {@code aborts_queue}). The abort then has no
     * effect: the connector treats the request as a success.
     */
    private void detectAbortOvertaken(SchedulerOutput out, List<EngineCoreOutput> outputs) {
        List<String> pendingAborts = new ArrayList<>();
        for (EngineCoreMessage message : inputQueue) {
            if (message instanceof EngineCoreMessage.Abort abort && !appliedEagerly.contains(abort)) {
                pendingAborts.addAll(abort.requestIds());
            }
        }
        for (EngineCoreOutput output : outputs) {
            if (output.finished() && pendingAborts.contains(output.requestId())) {
                violations.record(ViolationKind.ABORT_OVERTAKEN_BY_COMPLETION, output.requestId(),
                        "update_from_output(" + out.step() + ") finished " + output.requestId() + " as '"
                                + output.finishReason() + "' although ABORT(" + output.requestId()
                                + ") was already received and waits in input_queue");
            }
        }
    }

    /** True when no message waits in the input socket or queues and no step is in the batch queue. */
    public synchronized boolean isIdle() {
        return inputSocket.isEmpty() && inputQueue.isEmpty() && abortsQueue.isEmpty() && batchQueue.isEmpty();
    }

    /** Steps scheduled and not yet processed, oldest last. */
    public synchronized List<SchedulerOutput> batchQueueSnapshot() {
        return List.copyOf(batchQueue);
    }
}
