package vllmrace.model.frontend;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.engine.Fifo;

/**
 * Mirrors {@code vllm/v1/engine/core_client.py}, {@code AsyncMPClient}: ADD and ABORT go out on one FIFO
 * socket; outputs come back on another.
 */
public final class EngineCoreClient {
    private final Fifo<EngineCoreMessage> inputSocket;
    private final Fifo<List<EngineCoreOutput>> outputSocket;

    public EngineCoreClient(Fifo<EngineCoreMessage> inputSocket, Fifo<List<EngineCoreOutput>> outputSocket) {
        this.inputSocket = inputSocket;
        this.outputSocket = outputSocket;
    }

    /** {@code add_request_async}: the ADD frame. */
    void addRequestAsync(EngineCoreRequest request) {
        inputSocket.send(new EngineCoreMessage.Add(request));
    }

    /** {@code abort_requests_async}: the ABORT frame (nothing is sent for no ids). */
    void abortRequestsAsync(List<String> requestIds, Map<String, Long> intendedArrivalTimes) {
        if (!requestIds.isEmpty()) {
            inputSocket.send(new EngineCoreMessage.Abort(requestIds, intendedArrivalTimes));
        }
    }

    /** {@code get_output_async}: every output batch EngineCore has sent so far. */
    List<EngineCoreOutput> getOutputAsync() {
        List<EngineCoreOutput> outputs = new ArrayList<>();
        for (List<EngineCoreOutput> batch : outputSocket.drain()) {
            outputs.addAll(batch);
        }
        return outputs;
    }
}
