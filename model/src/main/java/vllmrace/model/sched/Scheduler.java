package vllmrace.model.sched;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.connector.KvConnectorBaseV1;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.MatchedTokens;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.connector.PendingTransfers;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCoreOutput;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.KvCacheBlock;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Mirrors {@code vllm/v1/core/sched/scheduler.py}, {@code Scheduler} (commit 00024d31 for the request map and
 * the KV-connector paths; 2025-H1 for {@code add_request}, which overwrote a duplicate id instead of asserting),
 * and, for the {@link SchedulerKind#ASYNC_SCHEDULER} (upstream's default), the async scheduler's output placeholders
 * ({@code vllm/v1/core/sched/async_scheduler.py}); the sync {@link SchedulerKind#SCHEDULER} reserves none.
 *
 * <p>Each upstream fix of lifecycle §2 is a {@link Fix} switch read at the one place its code path differs:
 * {@link Fix#IS_FINISHED_GUARD} in {@link #updateFromOutput}, {@link Fix#SKIP_ABORT_OF_FINISHED},
 * {@link Fix#DELAY_FREE_ABORTED_LOAD} and {@link Fix#DELAY_FREE_UNLESS_RECVED} in {@link #finishRequests} (and
 * the release half of #32255 in {@link #updateFromKvXferFinished}).
 *
 * <p>A failed async KV load follows {@code kv_load_failure_policy} ({@link KvLoadFailurePolicy}; {@code "fail"} by
 * default since #34896): see {@link #handleInvalidBlocks}. {@code _free_blocks} asserts {@code request.is_finished()}.
 * Simplified: no sync loads, no prefix cache (so no block sharing, eviction or {@code cache_blocks}), no chunked prefill,
 * FCFS only. Preemption follows 00024d31 ({@link #preemptRequest(Request, boolean)}), with #48245's stale marking
 * ({@link Fix#STALE_OUTPUT_AFTER_PREEMPT}) and #50297's drop for KV producers ({@link Fix#REQUIRES_KV_DELIVERY}).
 *
 * <p>Race consequences are recorded in the {@link ViolationLog}, never thrown: a second {@code _free_request}
 * (SC1), {@code _free_blocks} of a missing id or a transfer report for one (SC2; upstream KeyError / assert,
 * EngineCore dies), a model output applied to a finished request (SC3), a delay-freed request that nothing
 * will release (SC5, {@link #checkDelayFreedReleasable}). Caller errors (null, a non-finished status for
 * {@code finish_requests}) throw before any state changes.
 *
 * <p>Upstream runs the scheduler on the EngineCore busy-loop thread only; the model serialises every public
 * method on {@code this} so harness threads may drive it directly.
 */
public final class Scheduler {
    /** {@code FinishReason.ERROR}: a request failed inside the engine (here: its KV load, under the fail policy). */
    public static final String FINISH_REASON_ERROR = "error";
    /**
     * The connector's {@code kv_lease_duration}, in scheduler steps: after it the remote side no longer writes into the
     * blocks it was given (upstream 30 s by default; the model counts {@code schedule()} calls).
     */
    public static final int KV_LEASE_STEPS = 2;
    /** #46289's reclaim grace for an aborted remote-KV receive, "kept comfortably above" the lease. */
    public static final int RECLAIM_GRACE_STEPS = KV_LEASE_STEPS + 1;
    /** Every request ever added, for the detectors at quiescence (upstream keeps no such list). */
    private final List<Request> added = new ArrayList<>();
    private final FixSet fixes;
    private final ViolationLog violations;
    private final KvCacheManager kvCacheManager;
    private final KvConnectorBaseV1 connector;
    private final KvLoadFailurePolicy kvLoadFailurePolicy;
    private final SchedulerKind kind;
    /** {@code vllm_config.max_concurrent_batches}: how many steps EngineCore keeps in flight (its batch queue size). */
    private final int maxConcurrentBatches;

    private final Map<String, Request> requests = new LinkedHashMap<>();
    /**
     * {@code skipped_waiting} then {@code waiting}, in one list (#35781's two queues, scanned in that order under FCFS:
     * {@code self.skipped_waiting or self.waiting}): the requests in {@link #skippedWaiting} come first.
     */
    private final java.util.LinkedList<Request> waiting = new java.util.LinkedList<>();
    private final Set<Request> skippedWaiting = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    private final List<Request> running = new ArrayList<>();
    private Set<String> finishedReqIds = new LinkedHashSet<>();
    private final Set<String> finishedRecvingKvReqIds = new LinkedHashSet<>();
    private final Set<String> failedRecvingKvReqIds = new LinkedHashSet<>();
    /** #46289 ({@link Fix#RECLAIM_ABORTED_RECV}): {@code _aborted_kv_recv_reclaim}, id -> the step at which it is reclaimed. */
    private final Map<String, Long> abortedKvRecvReclaim = new LinkedHashMap<>();
    /** Ids reclaimed by #46289's sweep: a late report for one is ignored, not asserted. */
    private final Set<String> reclaimedKvRecv = new LinkedHashSet<>();
    private long stepCounter;
    /** #45357 ({@link Fix#DEFER_BLOCK_FREE}): non-empty steps scheduled and processed, and each request's last one. */
    private long schedStepSeq;
    private long processedStepSeq;
    private final Map<Request, Long> lastSchedSeq = new java.util.IdentityHashMap<>();
    /** #45357: {@code deferred_frees}, (fence, blocks) in fence order. */
    private final Deque<Map.Entry<Long, List<KvCacheBlock>>> deferredFrees = new ArrayDeque<>();

    /** A scheduler without KV-cache accounting or connector (the frontend model's engine). */
    public Scheduler(FixSet fixes, ViolationLog violations) {
        this(fixes, violations, null, null);
    }

    /**
     * @param kvCacheManager the KV-cache manager, or null for no block accounting
     * @param connector      the scheduler-side KV connector ({@code self.connector}), or null
     */
    public Scheduler(FixSet fixes, ViolationLog violations, KvCacheManager kvCacheManager, KvConnectorBaseV1 connector) {
        this(fixes, violations, kvCacheManager, connector, KvLoadFailurePolicy.FAIL);
    }

    /** As {@link #Scheduler(FixSet, ViolationLog, KvCacheManager, KvConnectorBaseV1)}, with {@code kv_load_failure_policy}. */
    public Scheduler(FixSet fixes, ViolationLog violations, KvCacheManager kvCacheManager, KvConnectorBaseV1 connector,
                     KvLoadFailurePolicy kvLoadFailurePolicy) {
        this(fixes, violations, kvCacheManager, connector, kvLoadFailurePolicy, SchedulerKind.ASYNC_SCHEDULER,
                SchedulerKind.ASYNC_SCHEDULER.maxConcurrentBatchesAtPp1());
    }

    /**
     * The scheduler of one deployment: its class ({@code kind}) and {@code max_concurrent_batches} (1 for the sync
     * {@code Scheduler} at pipeline-parallel size 1, 2 for the {@code AsyncScheduler}; more with pipeline parallelism). The
     * other constructors are upstream's default: an {@code AsyncScheduler} with 2 batches in flight.
     *
     * @throws IllegalArgumentException if {@code maxConcurrentBatches < 1}
     */
    public Scheduler(FixSet fixes, ViolationLog violations, KvCacheManager kvCacheManager, KvConnectorBaseV1 connector,
                     KvLoadFailurePolicy kvLoadFailurePolicy, SchedulerKind kind, int maxConcurrentBatches) {
        this.kind = Objects.requireNonNull(kind, "kind");
        if (maxConcurrentBatches < 1) {
            throw new IllegalArgumentException("max_concurrent_batches must be >= 1, got " + maxConcurrentBatches);
        }
        this.maxConcurrentBatches = maxConcurrentBatches;
        this.kvLoadFailurePolicy = Objects.requireNonNull(kvLoadFailurePolicy, "kvLoadFailurePolicy");
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.violations = Objects.requireNonNull(violations, "violations");
        this.kvCacheManager = kvCacheManager;
        this.connector = connector;
        if (connector != null && kvCacheManager == null) {
            throw new IllegalArgumentException("a KV connector needs a KV-cache manager");
        }
    }

    /**
     * {@code Scheduler.add_request}. Upstream (2025-H1) appends to {@code waiting} and overwrites
     * {@code requests[id]} with no duplicate check; current upstream asserts instead. Either way a second
     * request under a held id is the race's finding, so the detector records it and the model goes on as
     * 2025-H1 did.
     *
     * @throws NullPointerException for a null request (nothing changes)
     */
    public synchronized void addRequest(Request request) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_ADD_REQUEST);
        Objects.requireNonNull(request, "request");
        Request existing = requests.get(request.requestId());
        if (existing != null) {
            violations.record(ViolationKind.DUPLICATE_LIVE_REQUEST, request.requestId(),
                    "ADD of " + request + " while the scheduler still holds " + existing);
        }
        waiting.add(request);
        requests.put(request.requestId(), request);
        added.add(request);
    }

    /**
     * {@code Scheduler.finish_requests(request_ids, finished_status)}: the abort path. Documented no-ops, as
     * upstream: an unknown id (the request finished and was freed while its abort was in flight, or was never
     * added), and, with {@link Fix#SKIP_ABORT_OF_FINISHED} (#25067), an already-finished request, so a double
     * abort changes nothing. An id named twice in one call is finished once (upstream takes {@code set(request_ids)}).
     * Without #25067 a finished request is finished again ({@code _free_request} twice).
     *
     * <p>Second pass, #32255: an aborted {@code WAITING_FOR_REMOTE_KVS} request has an async load writing into its
     * blocks, so with {@link Fix#DELAY_FREE_ABORTED_LOAD} its blocks are freed only by its
     * {@code finished_recving}; with {@link Fix#DELAY_FREE_UNLESS_RECVED} (the review's refinement) not when that
     * report already arrived, since no second one will come.
     *
     * @return the ids this call finished
     * @throws IllegalArgumentException if {@code finishedStatus} is not a finished status (upstream asserts)
     * @throws NullPointerException for null ids or status (nothing changes)
     */
    public synchronized List<String> finishRequests(Collection<String> requestIds, RequestStatus finishedStatus) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_FINISH_REQUESTS);
        Objects.requireNonNull(requestIds, "requestIds");
        if (!RequestStatus.isFinished(Objects.requireNonNull(finishedStatus, "finishedStatus"))) {
            throw new IllegalArgumentException("finish_requests needs a finished status, got " + finishedStatus);
        }
        for (String id : requestIds) {
            Objects.requireNonNull(id, "a request id to finish is null");
        }
        List<Request> valid = new ArrayList<>();
        for (String id : requestIds) {
            Request request = requests.get(id);
            if (request == null || valid.contains(request)) {
                continue;
            }
            if (request.isFinished() && fixes.isOn(Fix.SKIP_ABORT_OF_FINISHED)) {
                continue;
            }
            valid.add(request);
        }
        running.removeAll(valid);
        waiting.removeAll(valid);
        skippedWaiting.removeAll(valid);
        List<String> finished = new ArrayList<>();
        for (Request request : valid) {
            boolean delayFreeBlocks = false;
            if (fixes.isOn(Fix.DELAY_FREE_ABORTED_LOAD)) {
                delayFreeBlocks = request.status() == RequestStatus.WAITING_FOR_REMOTE_KVS
                        && !(fixes.isOn(Fix.DELAY_FREE_UNLESS_RECVED) && finishedRecvingKvReqIds.contains(request.requestId()));
                finishedRecvingKvReqIds.remove(request.requestId());
                failedRecvingKvReqIds.remove(request.requestId());
            }
            if (delayFreeBlocks && fixes.isOn(Fix.RECLAIM_ABORTED_RECV)) {
                abortedKvRecvReclaim.put(request.requestId(), stepCounter + RECLAIM_GRACE_STEPS);
            }
            request.setStatus(finishedStatus);
            freeRequest(request, delayFreeBlocks);
            finished.add(request.requestId());
        }
        return finished;
    }

    /**
     * {@code Scheduler.has_requests()}: {@code has_unfinished_requests() or has_finished_requests()}. Before #43433
     * {@code has_finished_requests} is {@code len(self.finished_req_ids) > 0}; with it ({@link Fix#HAS_REQUESTS_COUNTS_DELAY_FREED})
     * also, with a connector, finished requests still in {@code requests} waiting for a delayed free (#43433's diff:
     * {@code if self.connector is None: return False; return any(request.is_finished() for request in
     * self.requests.values())}), so the busy loop keeps stepping and polling {@code get_finished}.
     */
    public synchronized boolean hasRequests() {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_HAS_FINISHED_REQUESTS);
        if (!waiting.isEmpty() || !running.isEmpty() || !finishedReqIds.isEmpty()) {
            return true;
        }
        if (!fixes.isOn(Fix.HAS_REQUESTS_COUNTS_DELAY_FREED) || connector == null) {
            return false; // before #43433: len(self.finished_req_ids) > 0; with it: if self.connector is None: return False
        }
        for (Request request : requests.values()) {
            if (request.isFinished()) {
                return true; // return any(request.is_finished() for request in self.requests.values())
            }
        }
        return false;
    }

    /**
     * {@code Scheduler.schedule()}. Running requests first: each gets its remaining prompt tokens, or one decode
     * token; the async scheduler skips a request whose placeholders already reach {@code max_tokens}. Then
     * waiting requests: a {@code WAITING_FOR_REMOTE_KVS} request is promoted only once its {@code finished_recving}
     * arrived ({@code _update_waiting_for_remote_kv}); a new request asks the connector for external tokens, and an
     * async load allocates the blocks, starts the load ({@code update_state_after_alloc}) and parks the request
     * in {@code WAITING_FOR_REMOTE_KVS}; any other admitted request tells the connector its blocks too, with 0 external
     * tokens (upstream calls {@code update_state_after_alloc} for every request it allocates from waiting: the job-based
     * offloader's reuse fence needs a local request's blocks as much as a loading one's). A running request whose blocks cannot be allocated preempts the tail of
     * {@code running} (FCFS {@code self.running.pop()}) until the allocation succeeds or the victim is itself, which ends
     * the running loop (with #49675 also a victim whose free would be deferred, before it is touched); in a step that preempted, no waiting request is admitted ({@code if not preempted_reqs}). A
     * waiting request whose blocks cannot be allocated waits. A PREEMPTED request in {@code waiting} is admitted like a new
     * one and recomputes its prompt and delivered output; with #48245 not while deliverable stale output is in flight.
     * Finally ships {@code finished_req_ids} and starts a new set ({@code _update_after_schedule}).
     */
    public synchronized SchedulerOutput schedule() {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_SCHEDULE);
        Map<String, Integer> numScheduledTokens = new LinkedHashMap<>();
        List<Request> preemptedReqs = new ArrayList<>();
        int reqIndex = 0;
        while (reqIndex < running.size()) {
            Request request = running.get(reqIndex);
            if (request.numOutputPlaceholders() > 0
                    && request.numOutputTokens() + request.numOutputPlaceholders() >= request.maxTokens()) {
                reqIndex++;
                continue; // "Async scheduling: ... the previous step has reached request.max_tokens" (never with Scheduler)
            }
            if (!kind.reservesPlaceholders()
                    && request.numComputedTokens() >= Math.max(1, request.numPromptTokens()) + request.numOutputTokens()) {
                // num_new_tokens = num_tokens_with_spec + num_output_placeholders - num_computed_tokens == 0: the sync
                // Scheduler has no placeholder to decode from while the step that samples the next token is in flight
                // (an empty-prompt model request's first scheduled token stands for its one-token prompt)
                reqIndex++;
                continue;
            }
            int n = numTokensToSchedule(request);
            boolean allocated;
            while (true) {
                allocated = allocateSlots(request, n);
                if (allocated) {
                    break;
                }
                // "The request cannot be scheduled. Preempt the lowest-priority request." (FCFS: self.running.pop())
                if (fixes.isOn(Fix.STOP_PREEMPTION_AT_FENCED_VICTIM) && blockFreeFenced(running.get(running.size() - 1))) {
                    break; // #49675: the victim's blocks would be deferred, freeing nothing now: stop this retry
                }
                Request preemptedReq = running.remove(running.size() - 1);
                if (numScheduledTokens.remove(preemptedReq.requestId()) != null) {
                    reqIndex--; // scheduled earlier in this step: its tokens go back (upstream's PRIORITY branch)
                }
                preemptRequest(preemptedReq, dropStaleOutputOnPreempt());
                preemptedReqs.add(preemptedReq);
                if (preemptedReq == request) {
                    break; // "No more request to preempt. Cannot schedule this request."
                }
            }
            if (!allocated) {
                break; // "Cannot schedule this request."
            }
            numScheduledTokens.put(request.requestId(), n);
            reqIndex++;
        }
        Deque<Request> stepSkippedWaiting = new ArrayDeque<>();
        boolean passedBlockless = false; // #57841: the scan has skipped a request that holds no blocks
        while (preemptedReqs.isEmpty() && !waiting.isEmpty()) { // "if not preempted_reqs": no admission in a step that preempted
            Request request = waiting.peekFirst();
            if (fixes.isOn(Fix.STALE_OUTPUT_AFTER_PREEMPT) && request.numStaleOutputTokens() > 0 && !request.dropStaleOutput()) {
                // #48245: "Deliverable stale output still in flight: resuming now could resample a position that output
                // later delivers. It drains within the pipeline depth."
                passedBlockless |= holdsNoBlocks(request);
                stepSkippedWaiting.add(popWaiting());
                continue;
            }
            if (request.status() == RequestStatus.WAITING_FOR_REMOTE_KVS) {
                if (!updateWaitingForRemoteKv(request)) {
                    passedBlockless |= holdsNoBlocks(request);
                    stepSkippedWaiting.add(popWaiting());
                    continue;
                }
                request.setStatus(RequestStatus.WAITING);
            } else if (connector != null && request.numComputedTokens() == 0) {
                MatchedTokens matched = connector.getNumNewMatchedTokens(request, request.numComputedTokens());
                if (matched.numExternalTokens() == null) {
                    passedBlockless |= holdsNoBlocks(request);
                    stepSkippedWaiting.add(popWaiting()); // ask again later
                    continue;
                }
                if (matched.loadKvAsync() && passedBlockless && fixes.isOn(Fix.NO_LOAD_BEHIND_BLOCKLESS)) {
                    stepSkippedWaiting.add(popWaiting()); // #57841: "the load waits, holding nothing"
                    continue;
                }
                if (matched.loadKvAsync()) {
                    int ext = matched.numExternalTokens();
                    if (!allocateBlocksFor(request.requestId(), ext)) {
                        break;
                    }
                    connector.updateStateAfterAlloc(request, kvCacheManager.getBlockIds(request.requestId()), ext);
                    request.setStatus(RequestStatus.WAITING_FOR_REMOTE_KVS);
                    stepSkippedWaiting.add(popWaiting());
                    continue;
                }
            }
            int n = numTokensToSchedule(request);
            if (!allocateSlots(request, n)) {
                break;
            }
            if (connector != null) { // upstream calls it for every request it allocates from waiting: 0 external tokens here
                connector.updateStateAfterAlloc(request, kvCacheManager.getBlockIds(request.requestId()), 0);
            }
            popWaiting();
            request.setStatus(RequestStatus.RUNNING);
            running.add(request);
            numScheduledTokens.put(request.requestId(), n);
        }
        while (!stepSkippedWaiting.isEmpty()) { // skipped_waiting.prepend_requests(step_skipped_waiting), in scan order
            Request skipped = stepSkippedWaiting.pollLast();
            waiting.addFirst(skipped);
            skippedWaiting.add(skipped);
        }
        SchedulerOutput out = new SchedulerOutput(++stepCounter, numScheduledTokens, finishedReqIds);
        if (deferBlockFree() && out.totalNumScheduledTokens() > 0) {
            schedStepSeq++; // "advance the fence only for non-empty steps"
        }
        if (connector != null) {
            connector.buildConnectorMeta(out);
        }
        updateAfterSchedule(out);
        return out;
    }

    /**
     * {@code _update_after_schedule}: {@code requests[id].num_computed_tokens += n}, placeholders, new finished set.
     * The lookup is unchecked upstream (#42157): a scheduled id no longer in {@code requests} raises KeyError on the
     * busy loop, which the model records as an engine assert and skips.
     */
    private void updateAfterSchedule(SchedulerOutput out) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_UPDATE_AFTER_SCHEDULE);
        // the override: super(), then placeholders
        UpstreamPins.enterWhen(kind.reservesPlaceholders(), UpstreamPin.ASYNC_SCHEDULER_UPDATE_AFTER_SCHEDULE);
        for (Map.Entry<String, Integer> scheduled : out.numScheduledTokens().entrySet()) {
            Request request = requests.get(scheduled.getKey());
            if (request == null) {
                violations.record(ViolationKind.ENGINE_ASSERT, scheduled.getKey(),
                        "_update_after_schedule: requests[" + scheduled.getKey() + "] raises KeyError (#42157)");
                continue;
            }
            request.addComputedTokens(scheduled.getValue());
            request.addInFlightTokens(scheduled.getValue());
            // is_prefill_chunk = num_computed_tokens < num_tokens + num_output_placeholders; AsyncScheduler reserves a
            // placeholder only for a step that samples (never a chunk here, the model does not split prompts, except a
            // resume whose stale placeholders are still counted: scheduler.py@00024d31 left them at preemption)
            boolean isPrefillChunk = request.numComputedTokens()
                    < request.numPromptTokens() + request.numOutputTokens() + request.numOutputPlaceholders();
            if (kind.reservesPlaceholders() && !isPrefillChunk) {
                request.addOutputPlaceholder(); // AsyncScheduler._update_after_schedule: num_output_placeholders += 1
            }
            if (deferBlockFree()) {
                lastSchedSeq.put(request, schedStepSeq); // record the in-flight step, to fence deferred block freeing
            }
        }
        finishedReqIds = new LinkedHashSet<>();
    }

    /**
     * {@code _update_waiting_for_remote_kv}: ready only once {@code finished_recving} arrived. A load that failed
     * under the recompute policy ({@code failed_recving_kv_req_ids}) already had {@code num_computed_tokens} cut back
     * to its valid prefix by {@link #handleInvalidBlocks}: it keeps its blocks ({@code cache_blocks}; the model has no
     * prefix cache to publish them to), or frees them all when no token is valid. Otherwise the loaded tokens count
     * as computed, minus one when the whole prompt was loaded (one token must run to sample).
     */
    private boolean updateWaitingForRemoteKv(Request request) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_UPDATE_WAITING_FOR_REMOTE_KV);
        String id = request.requestId();
        if (!finishedRecvingKvReqIds.contains(id)) {
            return false;
        }
        if (failedRecvingKvReqIds.remove(id)) {
            if (request.numComputedTokens() == 0) {
                kvCacheManager.free(id); // "No valid computed tokens, release allocated blocks."
            }
        } else {
            int loaded = Math.min(kvCacheManager.numBlocks(id) * blockSize(), request.numPromptTokens());
            request.setNumComputedTokens(loaded >= request.numPromptTokens() && loaded > 0 ? loaded - 1 : loaded);
        }
        finishedRecvingKvReqIds.remove(id);
        return true;
    }

    /**
     * {@code Scheduler.update_from_output}: for each scheduled request, skip it when it is gone ({@code None}:
     * aborted and freed while the model ran it) or, with {@link Fix#IS_FINISHED_GUARD} (#33377), when it is
     * already finished; append the sampled token, run the stop check, and free stopped requests. Then the
     * connector's transfer reports ({@code _update_from_kv_xfer_finished}).
     *
     * @throws NullPointerException for null arguments (nothing changes)
     */
    public synchronized List<EngineCoreOutput> updateFromOutput(SchedulerOutput schedulerOutput, ModelRunnerOutput modelRunnerOutput) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_UPDATE_FROM_OUTPUT);
        // per request, inlined below
        UpstreamPins.enterWhen(kind.reservesPlaceholders(), UpstreamPin.ASYNC_SCHEDULER_UPDATE_REQUEST_WITH_OUTPUT);
        Objects.requireNonNull(schedulerOutput, "schedulerOutput");
        Objects.requireNonNull(modelRunnerOutput, "modelRunnerOutput");
        if (deferBlockFree() && schedulerOutput.totalNumScheduledTokens() > 0) {
            processedStepSeq++; // every device write of this and earlier steps has completed
            drainDeferredFrees();
        }
        List<EngineCoreOutput> outputs = new ArrayList<>();
        List<Request> stopped = new ArrayList<>();
        Set<String> failedKvLoadReqIds = handleInvalidBlocks(modelRunnerOutput.kvConnectorOutput().invalidBlockIds());
        for (Map.Entry<String, Integer> scheduled : schedulerOutput.numScheduledTokens().entrySet()) {
            Request request = requests.get(scheduled.getKey());
            boolean outputIsStale = false;
            if (request != null) {
                request.addInFlightTokens(-scheduled.getValue());
                if (fixes.isOn(Fix.STALE_OUTPUT_AFTER_PREEMPT) && request.numStaleOutputTokens() > 0) {
                    // #48245: "Drain any stale share (see _preempt_request) in lockstep."
                    outputIsStale = true;
                    request.setNumStaleOutputTokens(request.numStaleOutputTokens() - scheduled.getValue());
                    if (request.numStaleOutputTokens() < 0) {
                        violations.record(ViolationKind.ENGINE_ASSERT, request.requestId(), "update_from_output(step "
                                + schedulerOutput.step() + "): assert request.num_stale_output_tokens >= 0 fails for " + request);
                    }
                }
            }
            if (request == null || failedKvLoadReqIds.contains(scheduled.getKey())) {
                continue; // aborted while the model was executing it; or its KV load failed
            }
            if (request.isFinished()) {
                if (fixes.isOn(Fix.IS_FINISHED_GUARD)) {
                    continue;
                }
                violations.record(ViolationKind.OUTPUT_FOR_FINISHED_REQUEST, request.requestId(),
                        "update_from_output(step " + schedulerOutput.step() + ") appends a token to " + request);
            }
            if (outputIsStale && request.dropStaleOutput()) {
                continue; // #48245/#50297: "Drop-mode stale output ... is discarded entirely"
            }
            if (!modelRunnerOutput.reqIds().contains(request.requestId())) {
                continue;
            }
            if (kind.reservesPlaceholders() && !outputIsStale) {
                request.removeOutputPlaceholder(); // AsyncScheduler._update_request_with_output
                if (request.numOutputPlaceholders() < 0) {
                    violations.record(ViolationKind.OUTPUT_PLACEHOLDER_UNDERFLOW, request.requestId(), "update_from_output(step "
                            + schedulerOutput.step() + ") for " + request + ": num_output_placeholders = " + request.numOutputPlaceholders()
                            + ", AsyncScheduler._update_request_with_output's assert num_output_placeholders >= 0 fails, EngineCore dies");
                }
            }
            request.appendOutputToken();
            String finishReason = checkStop(request); // captured before _handle_stopped_request may start the next chunk
            boolean finished = finishReason != null && !request.startNextChunk();
            if (finished) {
                stopped.add(request);
                freeRequest(request, false);
            }
            outputs.add(new EngineCoreOutput(request.requestId(), request.arrivalTime(), 1, finishReason, finished));
        }
        running.removeAll(stopped);
        waiting.removeAll(stopped);
        skippedWaiting.removeAll(stopped);
        if (!failedKvLoadReqIds.isEmpty() && kvLoadFailurePolicy == KvLoadFailurePolicy.FAIL) {
            List<Request> failed = failedKvLoadReqIds.stream().map(requests::get).toList();
            finishRequests(failedKvLoadReqIds, RequestStatus.FINISHED_ERROR);
            for (Request request : failed) {
                outputs.add(new EngineCoreOutput(request.requestId(), request.arrivalTime(), 0, FINISH_REASON_ERROR));
            }
        }
        updateFromKvXferFinished(modelRunnerOutput.kvConnectorOutput());
        sweepAbortedKvRecvReclaim();
        return outputs;
    }

    /**
     * #46289 ({@link Fix#RECLAIM_ABORTED_RECV}, proposed): "on each {@code update_from_output}, sweep expired entries and
     * free their blocks via the existing {@code _free_blocks} path". An entry whose finished_recving came in time is gone
     * already ({@link #freeBlocks} drops it).
     */
    private void sweepAbortedKvRecvReclaim() {
        for (Iterator<Map.Entry<String, Long>> it = abortedKvRecvReclaim.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> entry = it.next();
            if (entry.getValue() <= stepCounter) {
                it.remove();
                reclaimedKvRecv.add(entry.getKey());
                if (connector instanceof PendingTransfers remote) {
                    // #46289's premise: the grace outlasts kv_lease_duration, after which the remote side's lease reaper
                    // has stopped writing into these blocks; the model's remote side honours it here
                    remote.remoteLeaseExpired(entry.getKey());
                }
                freeBlocks(requests.get(entry.getKey()));
            }
        }
    }

    /**
     * {@code vllm/v1/core/sched/utils.py} {@code check_stop}: by length first ({@code num_output_tokens >= max_tokens}:
     * FINISHED_LENGTH_CAPPED, reason "length"), then by a stop token (the sampled token is in {@code stop_token_ids}:
     * FINISHED_STOPPED, reason "stop").
     *
     * @return the finish reason, or null while the request runs on
     */
    private static String checkStop(Request request) {
        UpstreamPins.enter(UpstreamPin.CHECK_STOP);
        if (request.numOutputTokens() >= request.maxTokens()) {
            request.setStatus(RequestStatus.FINISHED_LENGTH_CAPPED);
        } else if (request.stopTokenAt() != Request.NO_STOP_TOKEN && request.numOutputTokens() == request.stopTokenAt()) {
            request.setStatus(RequestStatus.FINISHED_STOPPED);
        } else {
            return null;
        }
        return RequestStatus.getFinishedReason(request.status());
    }

    /**
     * {@code _update_from_kv_xfer_finished}, with upstream's asserts recorded instead of raised.
     * {@code finished_recving}: with #32255 ({@link Fix#DELAY_FREE_ABORTED_LOAD}) {@code assert req_id in
     * self.requests}; a waiting request is marked ready, a finished (aborted, delay-freed) one is freed, anything
     * else fails {@code assert RequestStatus.is_finished}; before #32255 the id is just added to
     * {@code finished_recving_kv_req_ids}. {@code finished_sending}: {@code assert req_id in self.requests}, then
     * {@code _free_blocks}.
     */
    private void updateFromKvXferFinished(KvConnectorOutput kvConnectorOutput) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_UPDATE_FROM_KV_XFER_FINISHED);
        if (connector != null) {
            connector.updateConnectorOutput(kvConnectorOutput);
        }
        for (String id : KvConnectorOutput.sorted(kvConnectorOutput.finishedRecving())) {
            if (reclaimedKvRecv.remove(id)) {
                continue; // #46289: a finished_recving after the reclaim is ignored instead of tripping the assert
            }
            if (!fixes.isOn(Fix.DELAY_FREE_ABORTED_LOAD)) {
                finishedRecvingKvReqIds.add(id);
                continue;
            }
            Request request = requests.get(id);
            if (request == null || (!request.isFinished() && request.status() != RequestStatus.WAITING_FOR_REMOTE_KVS)) {
                if (fixes.isOn(Fix.SCHEDULER_SKIP_LATE_REPORT)) {
                    continue; // seed 003 (3): logger.warning and skip a late report
                }
            }
            if (request == null) {
                violations.record(ViolationKind.LATE_TRANSFER_REPORT, id,
                        "finished_recving(" + id + "): assert req_id in self.requests fails, EngineCore dies");
            } else if (request.status() == RequestStatus.WAITING_FOR_REMOTE_KVS) {
                finishedRecvingKvReqIds.add(id);
            } else if (!request.isFinished()) {
                violations.record(ViolationKind.ENGINE_ASSERT, id,
                        "finished_recving(" + id + ") for " + request + ": assert RequestStatus.is_finished fails");
            } else {
                freeBlocks(request);
            }
        }
        for (String id : KvConnectorOutput.sorted(kvConnectorOutput.finishedSending())) {
            Request request = requests.get(id);
            if (request == null) {
                if (fixes.isOn(Fix.SCHEDULER_SKIP_LATE_REPORT)) {
                    continue; // seed 003 (3): logger.warning and skip a late report
                }
                violations.record(ViolationKind.LATE_TRANSFER_REPORT, id,
                        "finished_sending(" + id + "): assert req_id in self.requests fails, EngineCore dies");
                continue;
            }
            freeBlocks(request);
        }
    }

    /**
     * {@code _handle_invalid_blocks} with {@code _update_requests_with_invalid_blocks}, for async loads (the
     * {@code WAITING_FOR_REMOTE_KVS} requests in {@code waiting}): a request whose blocks include an invalid one has
     * {@code num_computed_tokens} cut back to the start of its first invalid block. Under {@link KvLoadFailurePolicy#FAIL}
     * the affected ids are returned (skipped in the output loop, then finished FINISHED_ERROR); under
     * {@link KvLoadFailurePolicy#RECOMPUTE} they are marked in {@code failed_recving_kv_req_ids} for
     * {@link #updateWaitingForRemoteKv}, and nothing is returned. Simplified: the model has no sync loads (a running
     * request never loads) and no prefix cache, so no block is shared between requests or evicted.
     */
    private Set<String> handleInvalidBlocks(Set<Integer> invalidBlockIds) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_UPDATE_REQUESTS_WITH_INVALID_BLOCKS);
        UpstreamPins.enter(UpstreamPin.SCHEDULER_HANDLE_INVALID_BLOCKS);
        if (invalidBlockIds.isEmpty() || kvCacheManager == null) {
            return Set.of();
        }
        Set<String> affected = new LinkedHashSet<>();
        int bs = blockSize();
        for (Request request : waiting) {
            if (request.status() != RequestStatus.WAITING_FOR_REMOTE_KVS) {
                continue;
            }
            List<Integer> blockIds = kvCacheManager.getBlockIds(request.requestId());
            int computed = failedRecvingKvReqIds.contains(request.requestId()) ? request.numComputedTokens() : blockIds.size() * bs;
            int computedBlocks = (computed + bs - 1) / bs;
            for (int idx = 0; idx < Math.min(computedBlocks, blockIds.size()); idx++) {
                if (invalidBlockIds.contains(blockIds.get(idx))) {
                    request.setNumComputedTokens(idx * bs); // truncate at the first failed block
                    affected.add(request.requestId());
                    break;
                }
            }
        }
        if (kvLoadFailurePolicy == KvLoadFailurePolicy.FAIL) {
            return affected;
        }
        failedRecvingKvReqIds.addAll(affected);
        return Set.of();
    }

    /**
     * A harness's preemption of one running request, as {@code schedule()}'s running loop does it when an allocation fails:
     * removed from {@code running}, then {@code _preempt_request} ({@link #preemptRequest(Request, boolean)}), with
     * {@code drop_stale_output} as #50297 passes it ({@code requires_kv_delivery}, with {@link Fix#REQUIRES_KV_DELIVERY}).
     *
     * @throws NotPreemptableException for an id the scheduler does not hold, or a request that is not RUNNING (upstream's
     *     {@code assert request.status == RequestStatus.RUNNING}); nothing changes
     * @throws NullPointerException for a null id (nothing changes)
     */
    public synchronized void preemptRequest(String requestId) {
        Objects.requireNonNull(requestId, "requestId");
        Request request = requests.get(requestId);
        if (request == null) {
            throw new NotPreemptableException(requestId, "the scheduler holds no request " + requestId);
        }
        if (request.status() != RequestStatus.RUNNING || !running.contains(request)) {
            throw new NotPreemptableException(requestId, "only running requests can be preempted, " + request + " is not");
        }
        running.remove(request);
        preemptRequest(request, dropStaleOutputOnPreempt());
    }

    /** #50297's argument to {@code _preempt_request}: {@code drop_stale_output=self.requires_kv_delivery}. */
    private boolean dropStaleOutputOnPreempt() {
        return fixes.isOn(Fix.REQUIRES_KV_DELIVERY) && requiresKvDelivery();
    }

    /**
     * {@code Scheduler._preempt_request} (scheduler.py@00024d31): {@code kv_cache_manager.free(request)} (the blocks go
     * back to the pool at once), status PREEMPTED, {@code num_computed_tokens = 0}, {@code num_preemptions += 1}, and
     * {@code waiting.prepend_request(request)}; no {@code request_finished}, no connector call. The request was popped from
     * {@code running} by the caller. At 00024d31 {@code num_output_placeholders} is left as it is; with
     * {@link Fix#STALE_OUTPUT_AFTER_PREEMPT} (#48245) the in-flight output is marked stale
     * ({@code num_stale_output_tokens = num_in_flight_tokens}, {@code drop_stale_output = drop_stale_output or (previous
     * drop and stale share left)}) and the placeholders are zeroed. {@code dropStaleOutput} is #50297's argument.
     */
    private void preemptRequest(Request request, boolean dropStaleOutput) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_PREEMPT_REQUEST);
        if (request.status() != RequestStatus.RUNNING) {
            violations.record(ViolationKind.ENGINE_ASSERT, request.requestId(),
                    "_preempt_request(" + request + "): assert request.status == RequestStatus.RUNNING fails, EngineCore dies");
            return;
        }
        freeRequestBlocks(request); // after #45357 also deferred while a step that scheduled it is in flight
        request.setStatus(RequestStatus.PREEMPTED);
        request.setNumComputedTokens(0);
        if (fixes.isOn(Fix.STALE_OUTPUT_AFTER_PREEMPT)) {
            request.setDropStaleOutput(dropStaleOutput || (request.dropStaleOutput() && request.numStaleOutputTokens() > 0));
            request.setNumStaleOutputTokens(request.numInFlightTokens());
            request.clearOutputPlaceholders();
        }
        request.countPreemption();
        waiting.add(skippedWaitingSize(), request); // waiting.prepend_request: the front of waiting, behind skipped_waiting
    }

    /**
     * {@code Scheduler._free_request(request, delay_free_blocks)}: contract says it runs at most once per request
     * (SC1). Asks the connector ({@code _connector_finished} → {@code request_finished}), ships the id in the next
     * {@code finished_req_ids}, and frees the blocks now unless the scheduler or the connector delays it. Upstream it
     * returns the connector's {@code kv_xfer_params} for the client's final output; no model client reads them.
     */
    private void freeRequest(Request request, boolean delayFreeBlocks) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_CONNECTOR_FINISHED);
        UpstreamPins.enter(UpstreamPin.SCHEDULER_FREE_REQUEST);
        request.countFreeRequestCall();
        if (request.numFreeRequestCalls() > 1) {
            violations.record(ViolationKind.DOUBLE_FREE_REQUEST, request.requestId(),
                    "_free_request ran " + request.numFreeRequestCalls() + " times for " + request
                            + (connector == null ? "" : ", so connector.request_finished did too"));
        }
        RequestFinishedResult connectorResult = connectorFinished(request);
        finishedReqIds.add(request.requestId());
        if (!(delayFreeBlocks || connectorResult.delayFreeBlocks())) {
            freeBlocks(request);
        }
    }

    /** {@code _connector_finished}: {@code request_finished(request, block_ids)}, or {@code (False, None)} without a connector. */
    private RequestFinishedResult connectorFinished(Request request) {
        if (connector == null) {
            return RequestFinishedResult.FREE_NOW;
        }
        List<Integer> blockIds = kvCacheManager.getBlockIds(request.requestId());
        if (blockIds.isEmpty() && connector.requiresKvDelivery() && request.numOutputTokens() > 0
                && (request.status() == RequestStatus.FINISHED_STOPPED || request.status() == RequestStatus.FINISHED_LENGTH_CAPPED)) {
            violations.record(ViolationKind.EMPTY_KV_HANDOFF, request.requestId(), "request_finished(" + request + ", []): "
                    + "a normal finish of a request that computed KV hands the producer connector no blocks; nothing is sent"
                    + (request.numPreemptions() > 0 ? " (preempted " + request.numPreemptions() + "x, its blocks freed)" : ""));
        }
        return connector.requestFinished(request, blockIds);
    }

    /**
     * {@code Scheduler._free_blocks}: {@code assert request.is_finished()} (a send or recv completion for a request
     * still running fails it: EngineCore dies, and nothing is freed), {@code kv_cache_manager.free(request)}, then
     * {@code del self.requests[id]}: a KeyError (SC2) when the id is gone. Package-private as a test seam: no path of
     * the model calls it twice.
     */
    void freeBlocks(Request request) {
        UpstreamPins.enter(UpstreamPin.SCHEDULER_FREE_BLOCKS);
        abortedKvRecvReclaim.remove(request.requestId());
        if (!request.isFinished()) {
            violations.record(ViolationKind.ENGINE_ASSERT, request.requestId(),
                    "_free_blocks(" + request + "): assert request.is_finished() fails, EngineCore dies");
            return;
        }
        if (!requests.containsKey(request.requestId())) {
            violations.record(ViolationKind.FREE_BLOCKS_OF_MISSING_REQUEST, request.requestId(),
                    "_free_blocks(" + request + "): del requests[id] raises KeyError");
            return;
        }
        freeRequestBlocks(request);
        requests.remove(request.requestId());
    }

    /**
     * #45357's {@code defer_block_free} (scheduler.py@00f4240e {@code __init__}): "With overlapping batches (async
     * scheduling or PP), a step may still be writing a freed request's KV blocks. A consumer KV Connector can reallocate
     * and fill those blocks via a load that isn't ordered against that write": {@code multiple_inflight_batches =
     * self.vllm_config.max_concurrent_batches > 1; if multiple_inflight_batches and kv_transfer_config.is_kv_consumer:
     * self.defer_block_free = True}.
     */
    private boolean deferBlockFree() {
        return connector != null && maxConcurrentBatches > 1 && connector.isKvConsumer() && fixes.isOn(Fix.DEFER_BLOCK_FREE);
    }

    /** Which scheduler class this is. */
    public SchedulerKind kind() {
        return kind;
    }

    /** {@code vllm_config.max_concurrent_batches}. */
    public int maxConcurrentBatches() {
        return maxConcurrentBatches;
    }

    /** {@code self.defer_block_free}, as {@code __init__} computes it (#45357). */
    public boolean defersBlockFrees() {
        return deferBlockFree();
    }

    /** {@code self.requires_kv_delivery = self.connector.requires_kv_delivery} (#50297; False without a connector). */
    public boolean requiresKvDelivery() {
        return connector != null && connector.requiresKvDelivery();
    }

    /** {@code len(self.deferred_frees)}: frees waiting for their fence step (#45357). */
    public synchronized int numDeferredFrees() {
        return deferredFrees.size();
    }

    /**
     * {@code _free_request_blocks} (#45357): free now unless a step that scheduled the request is still unprocessed;
     * then pop the bookkeeping now and queue the blocks behind the newest dispatched step ({@code sched_step_seq}).
     * Before #45357 ({@link Fix#DEFER_BLOCK_FREE} off): {@code kv_cache_manager.free} at once.
     */
    private void freeRequestBlocks(Request request) {
        if (kvCacheManager == null) {
            return;
        }
        Long last = lastSchedSeq.remove(request);
        if (!deferBlockFree() || last == null || last <= processedStepSeq) {
            kvCacheManager.free(request.requestId());
            return;
        }
        List<KvCacheBlock> blocks = kvCacheManager.popBlocksForFree(request.requestId());
        if (!blocks.isEmpty()) {
            deferredFrees.add(Map.entry(schedStepSeq, blocks));
        }
    }

    /**
     * #49675's {@code _should_defer_request_block_free}: {@code self.defer_block_free and request.last_sched_seq >
     * self.processed_step_seq}, the request's blocks would wait for an in-flight step if it were freed now.
     */
    private boolean blockFreeFenced(Request request) {
        Long last = lastSchedSeq.get(request);
        return deferBlockFree() && last != null && last > processedStepSeq;
    }

    /** {@code _drain_deferred_frees}: returns the blocks whose fence step has been processed. */
    private void drainDeferredFrees() {
        while (!deferredFrees.isEmpty() && deferredFrees.peekFirst().getKey() <= processedStepSeq) {
            kvCacheManager.freeBlocks(deferredFrees.pollFirst().getValue());
        }
    }

    /** Pops the head of the scan ({@code request_queue.pop_request()}), from {@code skipped_waiting} while it has any. */
    private Request popWaiting() {
        Request head = waiting.pollFirst();
        skippedWaiting.remove(head);
        return head;
    }

    private int skippedWaitingSize() {
        int n = 0;
        for (Request r : waiting) {
            if (!skippedWaiting.contains(r)) {
                break;
            }
            n++;
        }
        return n;
    }

    private boolean holdsNoBlocks(Request request) {
        return kvCacheManager == null || kvCacheManager.numBlocks(request.requestId()) == 0;
    }

    /** Prompt tokens still to compute, or one decode token. */
    private static int numTokensToSchedule(Request request) {
        return Math.max(1, request.numPromptTokensToCompute());
    }

    /** {@code kv_cache_manager.allocate_slots} for {@code n} more tokens; false (upstream None) when the pool is short. */
    private boolean allocateSlots(Request request, int n) {
        if (kvCacheManager == null) {
            return true;
        }
        return allocateBlocksFor(request.requestId(), request.numComputedTokens() + n);
    }

    /**
     * Tops the request's blocks up to hold {@code totalTokens}; false (upstream None) when the pool is short. As
     * upstream, {@code allocate_slots} runs even when no block is needed (it allocates none then).
     */
    private boolean allocateBlocksFor(String requestId, int totalTokens) {
        int bs = blockSize();
        int needed = (totalTokens + bs - 1) / bs - kvCacheManager.numBlocks(requestId);
        return kvCacheManager.allocateSlots(requestId, Math.max(0, needed) * bs).isPresent();
    }

    private int blockSize() {
        return kvCacheManager.blockSize();
    }

    /**
     * SC5 detector: every finished request still in {@code requests} (its free was delayed) must have exactly one
     * releasing event to come: a connector transfer of its id in flight or not yet reported. Each one without is
     * recorded as {@link ViolationKind#DELAY_FREED_NEVER_RELEASED}.
     *
     * @return the ids recorded
     */
    public synchronized List<String> checkDelayFreedReleasable() {
        List<String> stuck = unreleasableDelayFreed();
        for (String id : stuck) {
            violations.record(ViolationKind.DELAY_FREED_NEVER_RELEASED, id,
                    requests.get(id) + " is finished and still holds " + (kvCacheManager == null ? 0 : kvCacheManager.numBlocks(id))
                            + " block(s), but no transfer of it is in flight or unreported: nothing will free it");
        }
        return stuck;
    }

    /** Whether #46289's reclaim timer runs for {@code requestId}: it frees the request's blocks when it expires. */
    public synchronized boolean reclaimPending(String requestId) {
        return abortedKvRecvReclaim.containsKey(requestId);
    }

    /** The finished requests in {@code requests} that no future event will free (see {@link #checkDelayFreedReleasable}). */
    public synchronized List<String> unreleasableDelayFreed() {
        List<String> stuck = new ArrayList<>();
        for (Request request : requests.values()) {
            if (request.isFinished() && !hasPendingTransfer(request.requestId())) {
                stuck.add(request.requestId());
            }
        }
        return stuck;
    }

    /**
     * What another busy-loop iteration could change, for the bounded liveness check: each request in {@code requests}
     * (status, tokens, blocks, placeholders, stale share, preemptions), the queues in order, the finished and recv sets, and each pending #46289 reclaim's
     * remaining steps (a timer still running is progress to come). The step counter itself is left out: an engine that
     * schedules nothing still counts steps.
     */
    public synchronized String progressSignature() {
        StringBuilder b = new StringBuilder();
        for (Request r : requests.values()) {
            b.append(r.requestId()).append('@').append(r.arrivalTime()).append(' ').append(r.status()).append(' ')
                    .append(r.numComputedTokens()).append('/').append(r.numOutputTokens()).append(' ')
                    .append(kvCacheManager == null ? 0 : kvCacheManager.numBlocks(r.requestId()))
                    .append(" ph ").append(r.numOutputPlaceholders()).append(" stale ").append(r.numStaleOutputTokens())
                    .append(" preempted ").append(r.numPreemptions()).append(';');
        }
        b.append(" waiting ").append(waiting.stream().map(Request::requestId).toList())
                .append(" running ").append(running.stream().map(Request::requestId).toList())
                .append(" finished ").append(finishedReqIds).append(" recving ").append(finishedRecvingKvReqIds)
                .append(failedRecvingKvReqIds);
        abortedKvRecvReclaim.forEach((id, at) -> b.append(" reclaim ").append(id).append(" in ").append(at - stepCounter));
        deferredFrees.forEach(d -> b.append(" deferred free of ").append(d.getValue().size()).append(" block(s) behind step ").append(d.getKey()));
        return b.toString();
    }

    /**
     * LV1 and LV2, bounded liveness. Call only once the busy loop has settled: every transfer the environment will
     * deliver was delivered, and further iterations changed nothing ({@link #progressSignature}). Then an unfinished
     * request is STUCK (nothing will ever schedule it), and a finished one still in {@code requests} is LEAKED (its
     * blocks wait for an event that will not come); one SC5 already reported is not reported again.
     *
     * @param settledIterations how many further iterations changed nothing (for the message)
     */
    public synchronized void checkLiveness(int settledIterations) {
        if (settledIterations < 1) {
            throw new IllegalArgumentException("liveness needs at least one settled iteration, got " + settledIterations);
        }
        List<String> sc5 = unreleasableDelayFreed();
        for (Request r : requests.values()) {
            String blocks = (kvCacheManager == null ? 0 : kvCacheManager.numBlocks(r.requestId())) + " block(s)";
            if (!r.isFinished()) {
                violations.record(ViolationKind.REQUEST_STUCK, r.requestId(), r + " holds " + blocks + " and is neither finished "
                        + "nor scheduled: " + settledIterations + " more busy-loop iterations changed nothing, and no transfer will come");
            } else if (!sc5.contains(r.requestId())) {
                violations.record(ViolationKind.REQUEST_LEAKED, r.requestId(), r + " is finished and still holds " + blocks
                        + " in requests: " + settledIterations + " more busy-loop iterations changed nothing, and the event it waits for will not come");
            }
        }
    }

    /**
     * LV2 where the busy loop blocks: with EngineCore idle and {@code has_requests()} False, {@code run_busy_loop} waits on
     * {@code input_queue.get()} and no step polls {@code get_finished}, so every request still in {@code requests} stays
     * there until a new client request arrives. Needs no settling: the blocked loop is itself the fixed point.
     *
     * @param engineIdle no message waits in EngineCore's queues and no step is in flight
     */
    public synchronized void checkBlockedLoop(boolean engineIdle) {
        if (!engineIdle || hasRequests()) {
            return;
        }
        List<String> sc5 = unreleasableDelayFreed();
        for (Request r : requests.values()) {
            if (!sc5.contains(r.requestId())) {
                violations.record(ViolationKind.REQUEST_LEAKED, r.requestId(), r + " is still in requests holding "
                        + (kvCacheManager == null ? 0 : kvCacheManager.numBlocks(r.requestId())) + " block(s), but has_requests() is "
                        + "False: the busy loop blocks on input_queue and nothing polls the transfer that would free it");
            }
        }
    }

    /**
     * The scheduler's detectors at quiescence: SC1's converse (every finished request had its {@code _free_request}),
     * SC5's delay-freed requests nothing will release ({@link #checkDelayFreedReleasable}, any finished status), then
     * blocks held by no unfinished request and no in-flight load ({@link KvCacheManager#checkNoLeak}).
     */
    public synchronized void checkQuiescence() {
        for (Request request : added) {
            if (request.isFinished() && request.numFreeRequestCalls() == 0) {
                violations.record(ViolationKind.FINISHED_WITHOUT_FREE_REQUEST, request.requestId(),
                        request + " is finished but _free_request never ran for it (connector.request_finished not called)");
            }
        }
        checkDelayFreedReleasable();
        if (kvCacheManager == null) {
            return;
        }
        List<String> live = new ArrayList<>();
        for (Request request : requests.values()) {
            if (!request.isFinished() || hasPendingTransfer(request.requestId())) {
                live.add(request.requestId());
            }
        }
        kvCacheManager.checkNoLeak(live, connector instanceof PendingTransfers t ? t.inFlightLoadTargets() : List.of());
    }

    private boolean hasPendingTransfer(String requestId) {
        return connector instanceof PendingTransfers t && t.hasPendingTransfer(requestId);
    }

    /** {@code self.requests.get(id)}. */
    public synchronized Request getRequest(String requestId) {
        return requests.get(requestId);
    }

    /**
     * The request {@code requestId} names for a detector that outlives {@code requests}: the live one, else the last one
     * added under the id (finished, freed), else null.
     */
    public synchronized Request requestNamed(String requestId) {
        Request live = requests.get(requestId);
        if (live != null) {
            return live;
        }
        for (int i = added.size() - 1; i >= 0; i--) {
            if (added.get(i).requestId().equals(requestId)) {
                return added.get(i);
            }
        }
        return null;
    }

    /** Every request ever added, in order, finished ones included (the detectors' list; upstream keeps none). */
    public synchronized List<Request> addedSnapshot() {
        return List.copyOf(added);
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

    /** {@code finished_req_ids}: finished since the last schedule. */
    public synchronized Set<String> finishedReqIds() {
        return Set.copyOf(finishedReqIds);
    }

    /** {@code finished_recving_kv_req_ids}: async loads reported complete, not yet promoted. */
    public synchronized Set<String> finishedRecvingKvReqIds() {
        return Set.copyOf(finishedRecvingKvReqIds);
    }

    /** {@code failed_recving_kv_req_ids}: async loads whose blocks failed. */
    public synchronized Set<String> failedRecvingKvReqIds() {
        return Set.copyOf(failedRecvingKvReqIds);
    }

    public FixSet fixes() {
        return fixes;
    }
}
