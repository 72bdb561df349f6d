package vllmrace.lincheck.frontend;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The sequential specification of {@link FrontendOperations}: what a user of AsyncLLM may expect if every
 * operation took effect at once. Plain maps, no concurrency, obviously correct: add is rejected exactly while
 * the frontend tracks the id; abort drops the id and tells the engine; a request finishes after
 * {@link FrontendOperations#MAX_TOKENS} engine steps and the frontend drops it when the output arrives.
 */
public class FrontendSpecification {
    private final Set<String> frontend = new HashSet<>();
    private final ArrayDeque<String[]> inputSocket = new ArrayDeque<>();
    private final Map<String, Integer> engineTokens = new HashMap<>();
    private final List<String> finishedOutputs = new ArrayList<>();

    public String addRequest(int id) {
        String requestId = FrontendOperations.requestId(id);
        if (!frontend.add(requestId)) {
            return "REJECTED";
        }
        inputSocket.add(new String[] {"ADD", requestId});
        return "ACCEPTED";
    }

    public void abort(int id) {
        String requestId = FrontendOperations.requestId(id);
        if (frontend.remove(requestId)) {
            inputSocket.add(new String[] {"ABORT", requestId});
        }
    }

    public void engineStep() {
        while (!inputSocket.isEmpty()) {
            String[] message = inputSocket.poll();
            if (message[0].equals("ADD")) {
                engineTokens.put(message[1], 0);
            } else {
                engineTokens.remove(message[1]);
            }
        }
        for (String requestId : new ArrayList<>(engineTokens.keySet())) {
            int tokens = engineTokens.merge(requestId, 1, Integer::sum);
            if (tokens >= FrontendOperations.MAX_TOKENS) {
                engineTokens.remove(requestId);
                finishedOutputs.add(requestId);
            }
        }
    }

    public void outputStep() {
        frontend.removeAll(finishedOutputs);
        finishedOutputs.clear();
    }
}
