package vllmrace.hunt;

import java.util.List;
import java.util.Objects;
import vllmrace.model.VllmInstance;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.Settle;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.FrontendAwaits;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.races.Clean;
import vllmrace.races.ModellingError;
import vllmrace.races.RaceOutcome;
import vllmrace.races.TwoActorScenario;
import vllmrace.races.Violating;

/**
 * A {@link FrontendProgram} as a two-actor scenario over one connected {@link VllmInstance} (AsyncLLM on its event loop,
 * the socket pair, EngineCore), as the frontend races run. Actor 1 is the client's calls in turn, a new API call after
 * each ({@link FrontendAwaits#CLIENT_NEXT_CALL}); a call upstream refuses (add_request of a running id) ends the client,
 * as the exception ends its task, and is no modelling error. Actor 2 is EngineCore's iterations and the output handler's
 * passes, in turn. Each coroutine yields where the deployment's yield conditions make upstream suspend. The arbiter lets
 * EngineCore and the output handler run until nothing changes and judges: any detector finding is a violation.
 */
public final class FrontendHuntScenario extends TwoActorScenario {
    /** The client's request id. */
    public static final String REQUEST_ID = "X";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("no detector fired, liveness included") CLEAN,
        @Violating(value = "a detector fired", anyDetector = true) VIOLATION,
        @ModellingError("an actor raised what upstream does not, or the system never settled: a modelling error") MODEL_ERROR
    }

    private final VllmInstance vllm;

    public FrontendHuntScenario(FrontendProgram program, FixSet fixes, Configuration configuration) {
        this(program, new VllmInstance(Objects.requireNonNull(fixes, "fixes"),
                Objects.requireNonNull(configuration, "configuration")));
    }

    private FrontendHuntScenario(FrontendProgram program, VllmInstance vllm) {
        super(vllm);
        this.vllm = vllm;
        RequestOutputCollector first = vllm.asyncLlm().addRequest(REQUEST_ID, program.params()).run().join();
        for (int i = 0; i < program.setupRounds(); i++) {
            vllm.engineCore().runBusyLoopOnce();
            vllm.asyncLlm().outputHandler().run();
        }
        Coroutine<?> client = null;
        for (FrontendOp op : program.client()) {
            Coroutine<?> call = switch (op) {
                case READD -> vllm.asyncLlm().addRequest(REQUEST_ID, program.params());
                case ABORT -> vllm.asyncLlm().abort(REQUEST_ID);
                case CANCEL -> vllm.asyncLlm().abort(first.requestId(), true);
                default -> throw new IllegalArgumentException(op + " is not the client's");
            };
            client = client == null ? call : Coroutine.sequence("client", client, FrontendAwaits.CLIENT_NEXT_CALL, call);
        }
        Coroutine<?> engine = null;
        for (FrontendOp op : program.engine()) {
            Coroutine<?> next = switch (op) {
                case OUTPUT_HANDLER -> vllm.asyncLlm().outputHandler();
                case ENGINE_STEP -> vllm.asyncLlm().engineCoreIterations(1, vllm.engineCore()::runBusyLoopOnce);
                default -> throw new IllegalArgumentException(op + " is not EngineCore's or the output handler's");
            };
            engine = engine == null ? next
                    : Coroutine.sequence("EngineCore and output_handler", engine, FrontendAwaits.ENGINE_CORE_STEP, next);
        }
        actors(client, engine);
    }

    /** Unused: the hunt classifies its runs in {@link #arbiter()}, any detector a finding; declared for the one base. */
    @Override
    protected List<vllmrace.races.Ending> endings() {
        return List.of(ending(Outcome.CLEAN));
    }

    /** EngineCore and the output handler go round until nothing changes, then the detectors at quiescence. */
    @Override
    protected void settle() {
        int settled = Settle.run(() -> {
            vllm.engineCore().runBusyLoopOnce();
            vllm.asyncLlm().outputHandler().run();
        }, this::signature, () -> vllm.engineCore().isIdle() && !vllm.scheduler().hasRequests() && vllm.inputSocket().isEmpty()
                && vllm.process().outputSocket().isEmpty(), () -> vllm.violations().engineDead());
        if (settled == 0) {
            return; // EngineCore died at an assert: nothing past it is upstream's
        }
        vllm.engineCore().processInputQueue();
        vllm.asyncLlm().outputHandler().run();
        vllm.checkQuiescence();
    }

    private String signature() {
        return vllm.scheduler().progressSignature() + " | frontend " + vllm.outputProcessor().requestStatesSnapshot().size()
                + " | sockets " + vllm.inputSocket().isEmpty() + vllm.process().outputSocket().isEmpty();
    }

    @Override
    public Outcome arbiter() {
        try {
            settle();
        } catch (IllegalStateException e) {
            return Outcome.MODEL_ERROR;
        }
        if (unexpectedActorFailure() != null) {
            return Outcome.MODEL_ERROR;
        }
        return violations().isEmpty() ? Outcome.CLEAN : Outcome.VIOLATION;
    }
}
