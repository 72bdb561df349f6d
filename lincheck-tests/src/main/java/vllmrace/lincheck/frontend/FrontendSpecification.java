package vllmrace.lincheck.frontend;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import vllmrace.model.fix.Fix;

/**
 * The sequential specification of {@link FrontendOperations}: what a user of AsyncLLM may expect if every operation took
 * effect at once. Plain maps, no concurrency. With unique internal ids (#27987) every add is accepted under its own
 * internal id; without them an add is rejected exactly while the frontend tracks its internal id (the id, or its first
 * child's {@code 0_<id>}). The client's abort drops every request under the id; a cancellation drops the id's last
 * accepted add (a parent's id: its children). A request finishes after {@link FrontendOperations#MAX_TOKENS} engine
 * steps, a stop request at its first token; the frontend drops either when the output handler sees it, and sends ABORT
 * for a stop. A parent goes with its last child.
 */
public class FrontendSpecification {
    private record Output(String internal, int tokens, boolean finished) {
    }

    private final boolean uniqueInternalIds = FrontendOperations.fixes().isOn(Fix.UNIQUE_INTERNAL_IDS);
    /** request_states: internal id → external id; stop requests and children are told by the sets below. */
    private final Map<String, String> states = new LinkedHashMap<>();
    private final List<String> stops = new ArrayList<>();
    /** parent_requests: parent id → its children's internal ids. */
    private final Map<String, List<String>> parents = new LinkedHashMap<>();
    private final String[] lastAdded = new String[2];
    private int nextSuffix;
    private final ArrayDeque<String[]> inputSocket = new ArrayDeque<>();
    private final Map<String, Integer> engineTokens = new LinkedHashMap<>();
    /** Each internal id's total tokens (a session's: the sum of its chunks'). */
    private final Map<String, Integer> maxTokens = new LinkedHashMap<>();
    private final List<Output> outputs = new ArrayList<>();

    private String add(int id, int n, boolean stop) {
        return add(id, n, stop, FrontendOperations.MAX_TOKENS);
    }

    private String add(int id, int n, boolean stop, int tokens) {
        String external = FrontendOperations.requestId(id);
        String assigned = uniqueInternalIds ? external + "-" + nextSuffix++ : external;
        List<String> internal = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            internal.add(n == 1 ? assigned : i + "_" + assigned);
        }
        if (states.containsKey(internal.get(0))) {
            return "REJECTED";
        }
        for (String child : internal) {
            states.put(child, external);
            maxTokens.put(child, tokens);
            inputSocket.add(new String[] {"ADD", child});
        }
        if (stop) {
            stops.add(assigned);
        }
        if (n > 1) {
            parents.put(assigned, internal);
        }
        lastAdded[id] = assigned;
        return "ACCEPTED";
    }

    public String addRequest(int id) {
        return add(id, 1, false);
    }

    public String addParallel(int id) {
        return add(id, 2, false);
    }

    public String addStop(int id) {
        return add(id, 1, true);
    }

    /** A session's chunk boundaries are outputs like any other here: it finishes after all its chunks' tokens. */
    public String addSession(int id) {
        return add(id, 1, false, java.util.Arrays.stream(FrontendOperations.SESSION_CHUNKS).sum());
    }

    public void take(int id) {
        // what the caller takes is not an operation's result: FE5 is the validated invariant
    }

    public void abort(int id) {
        String external = FrontendOperations.requestId(id);
        List<String> internal = states.entrySet().stream().filter(e -> e.getValue().equals(external)).map(Map.Entry::getKey).toList();
        internal.forEach(this::drop);
        abortInEngine(internal);
    }

    public void cancel(int id) {
        String assigned = lastAdded[id];
        if (assigned == null) {
            return;
        }
        boolean aState = states.containsKey(assigned);
        List<String> internal = (aState ? List.of(assigned)
                : parents.containsKey(assigned) ? parents.get(assigned) : List.<String>of()).stream().filter(states::containsKey).toList();
        internal.forEach(this::drop);
        if (!aState) {
            parents.remove(assigned); // the elif branch: a parent's own id drops the parent
        }
        abortInEngine(internal);
    }

    private void abortInEngine(List<String> internal) {
        internal.forEach(i -> inputSocket.add(new String[] {"ABORT", i}));
    }

    /** Drops a state; a parent goes with its last child. */
    private void drop(String internal) {
        states.remove(internal);
        stops.remove(internal);
        parents.values().removeIf(children -> children.contains(internal) && children.stream().noneMatch(states::containsKey));
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
            boolean finished = tokens >= maxTokens.get(requestId);
            outputs.add(new Output(requestId, tokens, finished));
            if (finished) {
                engineTokens.remove(requestId);
            }
        }
    }

    public void transfersComplete() {
        // the saves delay-free blocks in EngineCore only: nothing a frontend user sees
    }

    public void outputStep() {
        for (Output output : outputs) {
            if (!states.containsKey(output.internal())) {
                continue;
            }
            if (stops.contains(output.internal()) && !output.finished()) {
                drop(output.internal());
                abortInEngine(List.of(output.internal()));
            } else if (output.finished()) {
                drop(output.internal());
            }
        }
        outputs.clear();
    }
}
