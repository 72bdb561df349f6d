package vllmrace.hunt;

/**
 * One operation of a {@link FrontendProgram}'s actors. Actor 1 is the client, through AsyncLLM's API; actor 2 is what
 * runs without it: EngineCore's busy loop (another process) and AsyncLLM's output handler task. Each is one upstream
 * coroutine (or one busy-loop iteration), its awaits yielding where the deployment's yield conditions say.
 */
public enum FrontendOp {
    /** client: {@code AsyncLLM.add_request(X)}, a new request under the client's id (the frontend may refuse it: still running) */
    READD(true, "add_request(X)"),
    /** client: {@code AsyncLLM.abort(X)} by the external id (an API abort: every internal id it resolves to) */
    ABORT(true, "abort(X)"),
    /** client: {@code generate()}'s cancellation of the first request, {@code abort(q.request_id, internal=True)} */
    CANCEL(true, "abort(X@1, internal)"),
    /** output handler: one pass of {@code _run_output_handler} (take outputs, process them, send the stop strings' aborts) */
    OUTPUT_HANDLER(false, "output_handler"),
    /** EngineCore: one busy-loop iteration (input queue, schedule, execute, update_from_output, outputs sent) */
    ENGINE_STEP(false, "engine_step");

    private final boolean client;
    private final String words;

    FrontendOp(boolean client, String words) {
        this.client = client;
        this.words = words;
    }

    /** Whether the client (actor 1) runs it; else actor 2. */
    public boolean client() {
        return client;
    }

    @Override
    public String toString() {
        return words;
    }
}
