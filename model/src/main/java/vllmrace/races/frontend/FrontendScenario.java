package vllmrace.races.frontend;

import java.util.Objects;
import vllmrace.model.VllmInstance;
import vllmrace.races.TwoActorScenario;

/**
 * What every frontend race shares: one connected {@link VllmInstance} (AsyncLLM on its event loop, the socket pair,
 * EngineCore), whose step log and detectors are the scenario's. The default settling lets EngineCore apply what is on
 * its input socket, the output handler deliver what EngineCore sent, and then runs the detectors at quiescence.
 */
abstract class FrontendScenario extends TwoActorScenario {
    /** The client's request id in every frontend story (X@1 the first request under it, X@2 the re-added one). */
    public static final String REQUEST_ID = "X";
    /** Each request's max_tokens: long enough that no request finishes by length inside a story. */
    static final int MAX_TOKENS = 16;

    protected final VllmInstance vllm;

    FrontendScenario(VllmInstance vllm) {
        super(Objects.requireNonNull(vllm, "vllm"));
        this.vllm = vllm;
    }

    public VllmInstance vllm() {
        return vllm;
    }

    @Override
    protected void settle() {
        vllm.engineCore().processInputQueue();
        vllm.asyncLlm().outputHandler().run();
        vllm.checkQuiescence();
    }
}
