package vllmrace.model.sched;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * Mirrors {@code vllm/v1/core/sched/scheduler.py}, {@code Scheduler} (commit 00024d31 for the request map;
 * 2025-H1 for {@code add_request}, which overwrote a duplicate id instead of asserting).
 *
 * <p>Upstream runs the scheduler on the EngineCore busy-loop thread only; the model serialises every public
 * method on {@code this} so JCStress actors and Lincheck threads may drive it directly.
 */
public final class Scheduler {
    private final FixSet fixes;
    private final ViolationLog violations;

    private final Map<String, Request> requests = new LinkedHashMap<>();
    private final Deque<Request> waiting = new ArrayDeque<>();
    private final List<Request> running = new ArrayList<>();
    private Set<String> finishedReqIds = new LinkedHashSet<>();
    private long stepCounter;

    public Scheduler(FixSet fixes, ViolationLog violations) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.violations = Objects.requireNonNull(violations, "violations");
    }

    /**
     * {@code Scheduler.add_request}. Upstream (2025-H1) appends to {@code waiting} and overwrites
     * {@code requests[id]} with no duplicate check; current upstream asserts instead. Either way a second
     * request under a held id is the race's finding, so the detector records it and the model goes on as
     * 2025-H1 did.
     */
    public synchronized void addRequest(Request request) {
        Objects.requireNonNull(request, "request");
        Request existing = requests.get(request.requestId());
        if (existing != null) {
            violations.record(ViolationKind.DUPLICATE_LIVE_REQUEST, request.requestId(),
                    "ADD of " + request + " while the scheduler still holds " + existing);
        }
        waiting.add(request);
        requests.put(request.requestId(), request);
    }

    /**
     * {@code Scheduler.finish_requests(request_ids, finished_status)}: the abort path. Unknown ids are skipped
     * (upstream is idempotent: a request may finish while its abort is in flight). Without #25067 an
     * already-finished request is finished again.
     *
     * @return the ids this call finished
     * @throws IllegalArgumentException if {@code finishedStatus} is not a finished status (upstream asserts)
     */
    public synchronized List<String> finishRequests(Collection<String> requestIds, RequestStatus finishedStatus) {
        Objects.requireNonNull(requestIds, "requestIds");
        if (!RequestStatus.isFinished(Objects.requireNonNull(finishedStatus, "finishedStatus"))) {
            throw new IllegalArgumentException("finish_requests needs a finished status, got " + finishedStatus);
        }
        List<Request> valid = new ArrayList<>();
        for (String id : requestIds) {
            Request request = requests.get(id);
            if (request == null) {
                continue;
            }
            if (request.isFinished() && fixes.isOn(Fix.SKIP_ABORT_OF_FINISHED)) {
                continue;
            }
            valid.add(request);
        }
        running.removeAll(valid);
        waiting.removeAll(valid);
        List<String> finished = new ArrayList<>();
        for (Request request : valid) {
            request.setStatus(finishedStatus);
            freeRequest(request);
            finished.add(request.requestId());
        }
        return finished;
    }

    /**
     * {@code Scheduler.schedule()}: waiting requests start running; every running request is scheduled one
     * token. Ships {@code finished_req_ids} and starts a new set ({@code _update_after_schedule}).
     */
    public synchronized SchedulerOutput schedule() {
        while (!waiting.isEmpty()) {
            Request request = waiting.poll();
            request.setStatus(RequestStatus.RUNNING);
            running.add(request);
        }
        Map<String, Integer> numScheduledTokens = new LinkedHashMap<>();
        for (Request request : running) {
            numScheduledTokens.put(request.requestId(), 1);
            request.addComputedTokens(1);
        }
        SchedulerOutput out = new SchedulerOutput(++stepCounter, numScheduledTokens, finishedReqIds);
        finishedReqIds = new LinkedHashSet<>();
        return out;
    }

    /**
     * {@code Scheduler.update_from_output}: appends each scheduled request's sampled token, runs the stop
     * check, frees stopped requests, and returns their outputs.
     */
    public synchronized List<EngineCoreOutput> updateFromOutput(SchedulerOutput schedulerOutput, ModelRunnerOutput modelRunnerOutput) {
        Objects.requireNonNull(schedulerOutput, "schedulerOutput");
        Objects.requireNonNull(modelRunnerOutput, "modelRunnerOutput");
        List<EngineCoreOutput> outputs = new ArrayList<>();
        List<Request> stopped = new ArrayList<>();
        for (Map.Entry<String, Integer> scheduled : schedulerOutput.numScheduledTokens().entrySet()) {
            Request request = requests.get(scheduled.getKey());
            if (request == null) {
                continue; // aborted while the model was executing it
            }
            if (request.isFinished()) {
                if (fixes.isOn(Fix.IS_FINISHED_GUARD)) {
                    continue;
                }
                violations.record(ViolationKind.OUTPUT_FOR_FINISHED_REQUEST, request.requestId(),
                        "update_from_output(step " + schedulerOutput.step() + ") appends a token to " + request);
            }
            request.appendOutputToken();
            String finishReason = null;
            if (request.numOutputTokens() >= request.maxTokens()) {
                request.setStatus(RequestStatus.FINISHED_LENGTH_CAPPED);
                finishReason = "length";
                stopped.add(request);
                freeRequest(request);
            }
            outputs.add(new EngineCoreOutput(request.requestId(), request.arrivalTime(), 1, finishReason));
        }
        running.removeAll(stopped);
        waiting.removeAll(stopped);
        return outputs;
    }

    /** {@code Scheduler._free_request}: contract says it runs at most once per request. */
    private void freeRequest(Request request) {
        request.countFreeRequestCall();
        if (request.numFreeRequestCalls() > 1) {
            violations.record(ViolationKind.DOUBLE_FREE_REQUEST, request.requestId(),
                    "_free_request ran " + request.numFreeRequestCalls() + " times for " + request);
        }
        finishedReqIds.add(request.requestId());
        freeBlocks(request);
    }

    /** {@code Scheduler._free_blocks}: {@code del self.requests[id]}, a KeyError when the id is gone. */
    private void freeBlocks(Request request) {
        if (requests.remove(request.requestId()) == null) {
            violations.record(ViolationKind.FREE_BLOCKS_OF_MISSING_REQUEST, request.requestId(),
                    "_free_blocks(" + request + "): del requests[id] raises KeyError");
        }
    }

    /** {@code self.requests.get(id)}. */
    public synchronized Request getRequest(String requestId) {
        return requests.get(requestId);
    }

    public synchronized List<Request> requestsSnapshot() {
        return List.copyOf(requests.values());
    }

    public synchronized List<Request> runningSnapshot() {
        return List.copyOf(running);
    }

    public synchronized List<Request> waitingSnapshot() {
        return List.copyOf(waiting);
    }
}
