package vllmrace.model.connector.multi;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.KvConnectorWorker;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.sched.Request;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * {@code vllm/distributed/kv_transfer/kv_connector/utils.py}, {@code KVOutputAggregator.aggregate}: each worker's
 * {@code get_finished} output is collected; an id is passed to the scheduler only when its per-id countdown (separate
 * for send and recv, starting at {@code expected_finished_count} = {@code get_finished_count() or world_size}) reaches
 * 0. The countdowns persist across steps.
 *
 * <p>Detector (CN1), no upstream counterpart: every id passed to the scheduler is checked against the request the id
 * names ({@code requestLookup}: the scheduler's live request, else the last one added under the id; read when the
 * aggregated output is built, i.e. before {@code update_from_output}). A second {@code finished_recving} for one
 * request, or a second terminal event (a send, or a recv of a request that is already finished) is recorded as
 * {@link ViolationKind#DUPLICATE_TRANSFER_EVENT}. Counted per request, not per id: a request served and freed under an
 * id earlier does not make the next one's single event a second (the id-reuse axis found the per-id count wrong).
 *
 * <p>Thread-safe: synchronized on the aggregator.
 */
public final class KvOutputAggregator implements KvConnectorWorker {
    private final List<KvConnectorWorker> workers;
    private final int expectedFinishedCount;
    private final ViolationLog violations;
    private final Function<String, Request> requestLookup;
    private final Map<String, Integer> sendRemaining = new HashMap<>();
    private final Map<String, Integer> recvRemaining = new HashMap<>();
    /** Per request (its object), or per id for an id no request was ever added under. */
    private final Map<Object, Integer> recvEvents = new HashMap<>();
    private final Map<Object, Integer> terminalEvents = new HashMap<>();

    /**
     * @param workers               one worker-side connector per rank (world size = its size, at least 1)
     * @param expectedFinishedCount {@code get_finished_count()}, or null for the world size
     * @param requestLookup         for the CN1 detector, the request an id names: the scheduler's live request, else the
     *                              last one added under the id, else null (null lookup: no detector)
     * @throws IllegalArgumentException for no workers or an expected count below 1 (nothing is built)
     */
    public KvOutputAggregator(List<? extends KvConnectorWorker> workers, Integer expectedFinishedCount, ViolationLog violations,
                              Function<String, Request> requestLookup) {
        this.workers = List.copyOf(Objects.requireNonNull(workers, "workers"));
        if (this.workers.isEmpty()) {
            throw new IllegalArgumentException("world size must be >= 1");
        }
        int expected = expectedFinishedCount == null ? this.workers.size() : expectedFinishedCount;
        if (expected < 1) {
            throw new IllegalArgumentException("expected_finished_count must be >= 1, got " + expected);
        }
        this.expectedFinishedCount = expected;
        this.violations = Objects.requireNonNull(violations, "violations");
        this.requestLookup = requestLookup;
    }

    /** The worker step: every rank's {@code get_finished}, then {@link #aggregate}. */
    @Override
    public synchronized KvConnectorOutput getFinished(Set<String> finishedReqIds) {
        Objects.requireNonNull(finishedReqIds, "finishedReqIds");
        KvConnectorOutput[] outputs = new KvConnectorOutput[workers.size()];
        for (int i = 0; i < workers.size(); i++) {
            outputs[i] = workers.get(i).getFinished(finishedReqIds);
        }
        return aggregate(List.of(outputs));
    }

    /**
     * {@code aggregate(outputs)}: counts each rank's reports down.
     *
     * @throws IllegalArgumentException if the number of outputs is not the world size (nothing changes)
     */
    public synchronized KvConnectorOutput aggregate(List<KvConnectorOutput> outputs) {
        UpstreamPins.enter(UpstreamPin.KV_OUTPUT_AGGREGATOR_AGGREGATE);
        Objects.requireNonNull(outputs, "outputs");
        if (outputs.size() != workers.size()) {
            throw new IllegalArgumentException("expected " + workers.size() + " worker outputs, got " + outputs.size());
        }
        Set<String> sending = new LinkedHashSet<>();
        Set<String> recving = new LinkedHashSet<>();
        Set<Integer> invalid = new LinkedHashSet<>();
        for (KvConnectorOutput out : outputs) {
            Objects.requireNonNull(out, "a worker output is null");
            countDown(out.finishedSending(), sendRemaining, sending);
            countDown(out.finishedRecving(), recvRemaining, recving);
            invalid.addAll(out.invalidBlockIds());
        }
        KvConnectorOutput aggregated = new KvConnectorOutput(sending, recving, invalid);
        detect(aggregated);
        return aggregated;
    }

    private void countDown(Set<String> ids, Map<String, Integer> remaining, Set<String> ready) {
        for (String id : ids) {
            int left = remaining.getOrDefault(id, expectedFinishedCount) - 1;
            if (left == 0) {
                remaining.remove(id);
                ready.add(id);
            } else {
                remaining.put(id, left);
            }
        }
    }

    private void detect(KvConnectorOutput out) {
        if (requestLookup == null) {
            return;
        }
        for (String id : KvConnectorOutput.sorted(out.finishedRecving())) {
            Request request = requestLookup.apply(id);
            if (recvEvents.merge(request == null ? id : request, 1, Integer::sum) > 1) {
                violations.record(ViolationKind.DUPLICATE_TRANSFER_EVENT, id,
                        "finished_recving(" + id + ") reported a second time (" + (request == null ? "no such request" : request) + ")");
            }
            if (request == null || request.isFinished()) {
                terminal(id, request, "finished_recving");
            }
        }
        for (String id : KvConnectorOutput.sorted(out.finishedSending())) {
            terminal(id, requestLookup.apply(id), "finished_sending");
        }
    }

    private void terminal(String id, Request request, String kind) {
        if (terminalEvents.merge(request == null ? id : request, 1, Integer::sum) > 1) {
            violations.record(ViolationKind.DUPLICATE_TRANSFER_EVENT, id,
                    kind + "(" + id + ") is a second terminal transfer event for the request");
        }
    }

    /** Ids some rank reported as received but not all ranks yet. */
    public synchronized Set<String> pendingRecvs() {
        return Set.copyOf(recvRemaining.keySet());
    }
}
