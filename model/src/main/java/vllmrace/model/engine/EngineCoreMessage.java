package vllmrace.model.engine;

import java.util.List;
import java.util.Map;

/**
 * One {@code (EngineCoreRequestType, payload)} frame on the frontend → EngineCore ZMQ socket.
 */
public sealed interface EngineCoreMessage {

    /** {@code EngineCoreRequestType.ADD}. */
    record Add(EngineCoreRequest request) implements EngineCoreMessage {
        @Override
        public String toString() {
            return "ADD(" + request + ")";
        }
    }

    /**
     * {@code EngineCoreRequestType.ABORT}: upstream carries only ids. {@code intendedArrivalTimes} is
     * detector-only: which frontend request each id was computed for, so EngineCore can tell when an ABORT
     * finishes a different request that happens to share the id.
     */
    record Abort(List<String> requestIds, Map<String, Long> intendedArrivalTimes) implements EngineCoreMessage {
        public Abort {
            requestIds = List.copyOf(requestIds);
            intendedArrivalTimes = Map.copyOf(intendedArrivalTimes);
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder("ABORT(");
            for (int i = 0; i < requestIds.size(); i++) {
                String id = requestIds.get(i);
                sb.append(i == 0 ? "" : ", ").append(id).append('@').append(intendedArrivalTimes.get(id));
            }
            return sb.append(')').toString();
        }
    }
}
