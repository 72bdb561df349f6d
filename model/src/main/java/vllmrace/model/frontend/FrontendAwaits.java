package vllmrace.model.frontend;

import vllmrace.model.asyncio.Await;
import vllmrace.model.asyncio.YieldCondition;

/**
 * The upstream awaits at the frontend model's step boundaries, each with whether it suspends (docs/frontend-yields.md has
 * the reading). Two rules decide most of them: awaiting a done future does not suspend, and {@code _send_input} queues
 * its message by a synchronous {@code send_multipart} call before the await, so a send's place on the wire is fixed in
 * the step that calls it (vllm/v1/engine/core_client.py@00080ee1; pyzmq's {@code _AsyncSocket._add_send_event} sends at
 * once, or queues in call order on EAGAIN).
 */
public final class FrontendAwaits {
    /** Between {@code OutputProcessor.add_request} and the ADD going out. */
    public static final Await ADD_SEND = Await.when(
            "async_llm.py _add_request: output_processor.add_request(...); await engine_core.add_request_async(request): "
                    + "_send_input queues the ADD (send_multipart) before the await can suspend",
            YieldCondition.AWAIT_INSERTED_BEFORE_SEND);
    /** Between one child's ADD and the next child's {@code OutputProcessor.add_request} ({@code n > 1}). */
    public static final Await NEXT_CHILD = Await.when(
            "async_llm.py add_request: for idx in range(n): await self._add_request(child, ...): the await of the previous "
                    + "child's ADD future (done unless the socket pushed back) and, for a DP client, its FIRST_REQ send",
            YieldCondition.SEND_BACK_PRESSURE, YieldCondition.DP_FIRST_REQ_SEND_BLOCKS);
    /** Between {@code OutputProcessor.abort_requests} / {@code flatten_req_to_abort} and the ABORT going out. */
    public static final Await ABORT_SEND = Await.when(
            "async_llm.py abort: all_request_ids = output_processor.abort_requests(...); await "
                    + "engine_core.abort_requests_async(all_request_ids): _send_input queues the ABORT before the await can suspend",
            YieldCondition.AWAIT_INSERTED_BEFORE_SEND);
    /** #15326's ordered abort: between the ABORT going out and {@code abort_requests} dropping the state. */
    public static final Await AFTER_ABORT_SEND = Await.when(
            "#15326 abort: await engine_core.abort_requests_async(request_ids); output_processor.abort_requests(...): the "
                    + "await of the ABORT's send future, done unless the socket pushed back",
            YieldCondition.SEND_BACK_PRESSURE);
    /** Between the output handler taking a batch and processing it. */
    public static final Await OUTPUTS_TAKEN = Await.never(
            "async_llm.py output_handler: outputs = await engine_core.get_output_async(): it has returned with the outputs, "
                    + "and process_outputs is the next statement");
    /** Between {@code process_outputs} (a stop string finished a request) and the ABORT for it going out. */
    public static final Await STOP_ABORT_SEND = Await.when(
            "async_llm.py output_handler: process_outputs(outputs_slice, ...); if i + 1 < len(slices): await asyncio.sleep(0); "
                    + "await engine_core.abort_requests_async(processed_outputs.reqs_to_abort)",
            YieldCondition.OUTPUT_BATCH_OVER_CHUNK, YieldCondition.AWAIT_INSERTED_BEFORE_SEND);
    /** #15326's {@code _handle_finished_reqs}: between the stop-string ABORT going out and {@code _finish_request}. */
    public static final Await AFTER_STOP_ABORT_SEND = Await.when(
            "#15326 _handle_finished_reqs: await engine_core.abort_requests_async(reqs_to_abort); then _finish_request: the "
                    + "await of the ABORT's send future, done unless the socket pushed back",
            YieldCondition.SEND_BACK_PRESSURE);
    /** Between the frontend's last step and EngineCore's busy loop going round, or between two of its iterations. */
    public static final Await ENGINE_CORE_STEP = Await.always(
            "EngineCore is another process: its busy loop goes round whenever it likes, between any two frontend steps");
    /** Between two takes of {@code generate()}'s loop: it yields each output to its caller (the HTTP stream). */
    public static final Await CALLER_TAKES_OUTPUT = Await.always(
            "async_llm.py generate: yield out: the output goes to the caller's stream, and the loop's next await q.get() "
                    + "suspends until a put");
    /** Between the output handler's pass and the next frontend task: its get_output_async on an empty queue. */
    public static final Await HANDLER_WAITS_FOR_OUTPUTS = Await.always(
            "async_llm.py output_handler: outputs = await engine_core.get_output_async() on an empty outputs_queue: the "
                    + "handler suspends and generate() runs (while a batch waits it does not: the model's pass takes every "
                    + "waiting batch)");
    /** Between two API calls of one client (its abort, then its re-add). */
    public static final Await CLIENT_NEXT_CALL = Await.always(
            "the client's next API call: a new request on the server, awaited by a new task (and add_request awaits "
                    + "get_supported_tasks / process_inputs_async before output_processor.add_request)");

    private FrontendAwaits() {
    }
}
