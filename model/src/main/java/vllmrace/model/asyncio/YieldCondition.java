package vllmrace.model.asyncio;

/**
 * A condition under which an upstream {@code await} that normally completes at once suspends, letting other coroutines
 * run: a model input a scenario, a profile or the hunt sets ({@link vllmrace.model.deploy.Configuration#yields()}), never
 * an assumption. Whether a vLLM deployment can produce it is part of the declaration ({@link #producedByVllm()}), with
 * the upstream line that decides it; docs/frontend-yields.md has the reading behind each.
 */
public enum YieldCondition {
    /**
     * The input socket cannot take a message at once (EAGAIN): pyzmq queues the send behind earlier queued ones, in call
     * order, and the await suspends until it is sent. The message's place on the wire is still fixed by the call, so
     * this opens a window only after a send, never between a state change and its send.
     */
    SEND_BACK_PRESSURE("input socket back-pressure", false,
            "vllm/utils/network_utils.py make_zmq_socket: the input socket is a ROUTER with SNDHWM=0 and no ROUTER_MANDATORY, "
                    + "so send_multipart never returns EAGAIN and pyzmq's _AsyncSocket._add_send_event returns a done future"),
    /**
     * One EngineCore output batch holds more than {@code VLLM_V1_OUTPUT_PROC_CHUNK_SIZE} (128) outputs and a stop string
     * finished a request in a chunk that is not the last: the output handler's {@code await asyncio.sleep(0)} between
     * chunks runs after that chunk's {@code process_outputs} and before its ABORT send.
     */
    OUTPUT_BATCH_OVER_CHUNK("output batch over 128 outputs", true,
            "vllm/v1/engine/async_llm.py@00080ee1 output_handler: for i, outputs_slice in enumerate(slices): process_outputs(...); "
                    + "if i + 1 < len(slices): await asyncio.sleep(0); then await engine_core.abort_requests_async(reqs_to_abort)"),
    /**
     * A data-parallel client with no wave running sends FIRST_REQ to the DP coordinator after the ADD, and that send
     * cannot complete at once: the add suspends after its ADD is queued, before the next child's.
     */
    DP_FIRST_REQ_SEND_BLOCKS("DP FIRST_REQ send blocks", false,
            "vllm/v1/engine/core_client.py@00080ee1 DPAsyncMPClient.add_request_async: to_await = self._send_input(ADD, ...); "
                    + "if not self.engines_running: await self.first_req_send_socket.send(...); no profile here runs data "
                    + "parallelism"),
    /**
     * An await between a state change and the send that announces it: #15326's demonstration inserted
     * {@code await asyncio.sleep(13)} after {@code output_processor.abort_requests}. No vLLM version has one: each send is
     * queued by a synchronous call ({@code _send_input} → {@code send_multipart}) in the same step as the state change;
     * the condition stands for a change that would add one (an async lock or encoder before the send).
     */
    AWAIT_INSERTED_BEFORE_SEND("an await inserted before the send", false,
            "vllm/v1/engine/core_client.py@00080ee1 AsyncMPClient._send_input_message: self.ensure_alive(); "
                    + "self.free_pending_messages(); return self.input_socket.send_multipart(msg, copy=False): no await before the send");

    private final String label;
    private final boolean producedByVllm;
    private final String evidence;

    YieldCondition(String label, boolean producedByVllm, String evidence) {
        this.label = label;
        this.producedByVllm = producedByVllm;
        this.evidence = evidence;
    }

    /** How tables name it. */
    public String label() {
        return label;
    }

    /** Whether a deployment of vLLM main (any profile here) can produce it: what its vLLM-main verdicts run under. */
    public boolean producedByVllm() {
        return producedByVllm;
    }

    /** The conditions some deployment of vLLM main can produce: what every profile's runs have holding. */
    public static java.util.Set<YieldCondition> producedByVllmMain() {
        java.util.EnumSet<YieldCondition> produced = java.util.EnumSet.noneOf(YieldCondition.class);
        for (YieldCondition condition : values()) {
            if (condition.producedByVllm) {
                produced.add(condition);
            }
        }
        return produced;
    }

    /** The upstream line that decides whether vLLM can produce it. */
    public String evidence() {
        return evidence;
    }
}
