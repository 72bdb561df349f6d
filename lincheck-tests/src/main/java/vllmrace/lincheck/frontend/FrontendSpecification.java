package vllmrace.lincheck.frontend;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import vllmrace.model.fix.Fix;

/**
 * The sequential specification of {@link FrontendOperations}: what a user of AsyncLLM may expect if every
 * operation took effect at once. Plain maps, no concurrency, obviously correct: with unique internal ids
 * (#27987) every add is accepted and gets its own internal id, and an abort by the caller's id aborts every request
 * under it; without them, add is rejected exactly while the frontend tracks the id. Abort drops the ids and tells the
 * engine; a request finishes after {@link FrontendOperations#MAX_TOKENS} engine steps and the frontend drops it when
 * the output arrives.
 */
public class FrontendSpecification {
    private final boolean uniqueInternalIds = FrontendOperations.fixes().isOn(Fix.UNIQUE_INTERNAL_IDS);
    private final Map<String, List<String>> frontend = new HashMap<>();
    private int nextSuffix;
    private final ArrayDeque<String[]> inputSocket = new ArrayDeque<>();
    private final Map<String, Integer> engineTokens = new HashMap<>();
    private final List<String> finishedOutputs = new ArrayList<>();

    public String addRequest(int id) {
        String external = FrontendOperations.requestId(id);
        if (!uniqueInternalIds && frontend.containsKey(external)) {
            return "REJECTED";
        }
        String internal = uniqueInternalIds ? external + "-" + nextSuffix++ : external;
        frontend.computeIfAbsent(external, k -> new ArrayList<>()).add(internal);
        inputSocket.add(new String[] {"ADD", internal});
        return "ACCEPTED";
    }

    public void abort(int id) {
        List<String> internal = frontend.remove(FrontendOperations.requestId(id));
        if (internal != null) {
            internal.forEach(i -> inputSocket.add(new String[] {"ABORT", i}));
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
        frontend.values().forEach(internal -> internal.removeAll(finishedOutputs));
        frontend.values().removeIf(List::isEmpty);
        finishedOutputs.clear();
    }
}
