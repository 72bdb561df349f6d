package vllmrace.model;

import java.util.List;
import java.util.Objects;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.Fifo;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.AsyncLlm;
import vllmrace.model.frontend.EngineCoreClient;
import vllmrace.model.frontend.OutputProcessor;
import vllmrace.model.frontend.RequestState;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.Scheduler;

/**
 * One connected model of a vLLM server: the {@link AsyncLlm} frontend on its event loop, the FIFO socket
 * pair, and {@link EngineCore} with its {@link Scheduler}, all sharing one {@link ViolationLog} and one
 * {@link StepLog}. Races are reproduced on this whole path, not on a component in isolation.
 */
public final class VllmInstance {
    private final FixSet fixes;
    private final ViolationLog violations = new ViolationLog();
    private final StepLog stepLog = new StepLog();
    private final Fifo<EngineCoreMessage> inputSocket = new Fifo<>();
    private final Fifo<List<EngineCoreOutput>> outputSocket = new Fifo<>();
    private final OutputProcessor outputProcessor = new OutputProcessor();
    private final AsyncLlm asyncLlm;
    private final Scheduler scheduler;
    private final EngineCore engineCore;

    public VllmInstance(FixSet fixes) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.asyncLlm = new AsyncLlm(fixes, new EventLoop(stepLog), outputProcessor, new EngineCoreClient(inputSocket, outputSocket));
        this.scheduler = new Scheduler(fixes, violations);
        this.engineCore = new EngineCore(scheduler, inputSocket, outputSocket, violations, stepLog);
    }

    /**
     * FE3 at quiescence (nothing in flight on either socket): every request the frontend still waits on must
     * be running in EngineCore as that same request; otherwise its caller never gets a final output.
     */
    public void checkQuiescence() {
        if (!inputSocket.isEmpty() || !outputSocket.isEmpty()) {
            throw new IllegalStateException("not quiescent: messages are still in flight");
        }
        for (RequestState state : outputProcessor.requestStatesSnapshot()) {
            Request held = scheduler.getRequest(state.requestId());
            if (held == null || held.arrivalTime() != state.arrivalTime() || held.isFinished()) {
                violations.record(ViolationKind.ORPHANED_FRONTEND_REQUEST, state.requestId(),
                        "frontend waits on " + state.requestId() + "@" + state.arrivalTime()
                                + " but EngineCore holds " + (held == null ? "nothing" : held) + " under that id");
            }
        }
    }

    public FixSet fixes() {
        return fixes;
    }

    public AsyncLlm asyncLlm() {
        return asyncLlm;
    }

    public OutputProcessor outputProcessor() {
        return outputProcessor;
    }

    public EngineCore engineCore() {
        return engineCore;
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    public Fifo<EngineCoreMessage> inputSocket() {
        return inputSocket;
    }

    public ViolationLog violations() {
        return violations;
    }

    public StepLog stepLog() {
        return stepLog;
    }
}
