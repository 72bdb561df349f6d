package vllmrace.model.engine;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.sched.ModelRunnerOutput;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;
import vllmrace.model.sched.Scheduler;
import vllmrace.model.sched.SchedulerOutput;

/**
 * Mirrors {@code vllm/v1/engine/core.py}: {@code EngineCoreProc._process_input_queue} and
 * {@code _handle_client_request} (ADD → {@code add_request}, ABORT → {@code abort_requests}), and
 * {@code EngineCore.step} (schedule → execute → {@code update_from_output}, outputs to the output socket).
 * The busy loop is one thread upstream; the model serialises on {@code this}.
 */
public final class EngineCore {
    private final Scheduler scheduler;
    private final Fifo<EngineCoreMessage> inputSocket;
    private final Fifo<List<EngineCoreOutput>> outputSocket;
    private final ViolationLog violations;
    private final StepLog stepLog;

    public EngineCore(Scheduler scheduler, Fifo<EngineCoreMessage> inputSocket, Fifo<List<EngineCoreOutput>> outputSocket,
                      ViolationLog violations, StepLog stepLog) {
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.inputSocket = Objects.requireNonNull(inputSocket, "inputSocket");
        this.outputSocket = Objects.requireNonNull(outputSocket, "outputSocket");
        this.violations = Objects.requireNonNull(violations, "violations");
        this.stepLog = Objects.requireNonNull(stepLog, "stepLog");
    }

    /** {@code EngineCoreProc._process_input_queue}: applies every message received so far, in wire order. */
    public synchronized void processInputQueue() {
        for (EngineCoreMessage message : inputSocket.drain()) {
            handleClientRequest(message);
        }
    }

    /** {@code EngineCoreProc._handle_client_request}. */
    private void handleClientRequest(EngineCoreMessage message) {
        stepLog.record("EngineCore", "_handle_client_request(" + message + ")");
        if (message instanceof EngineCoreMessage.Add add) {
            addRequest(add.request());
        } else if (message instanceof EngineCoreMessage.Abort abort) {
            abortRequests(abort);
        }
    }

    /** {@code EngineCore.add_request} → {@code Scheduler.add_request}. */
    private void addRequest(EngineCoreRequest request) {
        scheduler.addRequest(new Request(request.requestId(), request.arrivalTime(), request.maxTokens()));
    }

    /** {@code EngineCore.abort_requests} → {@code Scheduler.finish_requests(ids, FINISHED_ABORTED)}. */
    private void abortRequests(EngineCoreMessage.Abort abort) {
        for (Map.Entry<String, Long> target : abort.intendedArrivalTimes().entrySet()) {
            Request held = scheduler.getRequest(target.getKey());
            if (held != null && !held.isFinished() && held.arrivalTime() != target.getValue()) {
                violations.record(ViolationKind.ABORT_HIT_WRONG_REQUEST, target.getKey(),
                        "ABORT sent for " + target.getKey() + "@" + target.getValue() + " finishes " + held);
            }
        }
        scheduler.finishRequests(abort.requestIds(), RequestStatus.FINISHED_ABORTED);
    }

    /** One iteration of the busy loop: inputs, then {@code EngineCore.step}. */
    public synchronized void runBusyLoopOnce() {
        processInputQueue();
        SchedulerOutput out = scheduler.schedule();
        if (out.numScheduledTokens().isEmpty()) {
            return;
        }
        stepLog.record("EngineCore", "step(" + out.step() + ")");
        List<EngineCoreOutput> outputs = scheduler.updateFromOutput(out, ModelRunnerOutput.execute(out));
        if (!outputs.isEmpty()) {
            outputSocket.send(outputs);
        }
    }

    public Scheduler scheduler() {
        return scheduler;
    }
}
