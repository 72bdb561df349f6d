package vllmrace.model.fix;

import static vllmrace.model.fix.Provenance.merged;
import static vllmrace.model.fix.Provenance.mergedFromDiff;
import static vllmrace.model.fix.Provenance.mergedFromText;
import static vllmrace.model.fix.Provenance.proposed;
import static vllmrace.model.fix.Provenance.suite;

/**
 * The fixes, each a named switch the model reads at the one place its code path differs, with where it comes from
 * ({@link Provenance}: merged into vLLM, proposed upstream, or proposed by this suite). Which races a fix closes is the
 * registry's to say ({@code vllmrace.races.Race#closedBy}); the races' stories are their scenarios'.
 */
public enum Fix {
    /** {@code AsyncLLM.abort} computes the ids ({@code flatten_req_to_abort}), sends ABORT, and only then drops frontend state. */
    ORDERED_ABORT(
            proposed("#15326", "closed, not merged; upstream took #27987 instead",
                    "vllm/v1/engine/async_llm.py AsyncLLM.abort still calls output_processor.abort_requests(...) before "
                            + "await engine_core.abort_requests_async(...)"),
            "AsyncLLM.abort sends ABORT to EngineCore before dropping frontend state"),
    /** {@code update_from_output} skips {@code request is None or request.is_finished()}. */
    IS_FINISHED_GUARD(
            merged("#33377", "vllm/v1/core/sched/scheduler.py@00024d31",
                    "Scheduler.update_from_output: if request is None or request.is_finished():"),
            "Scheduler.update_from_output skips requests that are already finished"),
    /** Pending aborts ({@code aborts_queue}) are applied right before {@code update_from_output}. */
    EAGER_ABORTS(
            merged("#29987", "vllm/v1/engine/core.py@ac3cb2e2 (PR commit 408cf42f)",
                    "EngineCore.step / step_with_batch_queue: self._process_aborts_queue() before scheduler.update_from_output"),
            "EngineCore applies queued aborts just before update_from_output"),
    /**
     * {@code finish_requests} delays the free of an aborted WAITING_FOR_REMOTE_KVS request (its async load still writes
     * into the blocks), and {@code _update_from_kv_xfer_finished} frees a finished request on its finished_recving.
     * Without {@link #DELAY_FREE_UNLESS_RECVED} this is the PR's first, naive flag.
     */
    DELAY_FREE_ABORTED_LOAD(
            merged("#32255", "vllm/v1/core/sched/scheduler.py@00024d31",
                    "Scheduler.finish_requests: if request.status == RequestStatus.WAITING_FOR_REMOTE_KVS: (delay_free_blocks); "
                            + "_update_from_kv_xfer_finished frees a finished request on finished_recving"),
            "finish_requests delays the free of an aborted WAITING_FOR_REMOTE_KVS request until its finished_recving"),
    /**
     * The #32255 review's refinement (cursor bot, "KV blocks never freed if abort races with finished_recving"): no delay
     * when finished_recving already arrived, since no second report will come. Only matters with
     * {@link #DELAY_FREE_ABORTED_LOAD} ON. In main at 00024d31; the PR that added it is not identified: a review comment
     * on #32255 asked for exactly this check and #46283 calls the result "the #32255 fix", so it most likely landed in
     * #32255 before its merge, but the merged diff was not read.
     */
    DELAY_FREE_UNLESS_RECVED(
            merged("in main at 00024d31, PR not identified", "vllm/v1/core/sched/scheduler.py@00024d31 (asked for in #32255's review)",
                    "Scheduler.finish_requests: delay_free_blocks = request.request_id not in self.finished_recving_kv_req_ids"),
            "finish_requests does not delay the free when the request's finished_recving already arrived"),
    /** {@code finish_requests} skips requests that are already finished. */
    SKIP_ABORT_OF_FINISHED(
            merged("#25067", "vllm/v1/core/sched/scheduler.py@00024d31 (merged Oct 2025)",
                    "Scheduler.finish_requests: if request is None or request.is_finished(): continue"),
            "Scheduler.finish_requests skips already-finished requests"),
    /**
     * The output handler sends ABORT for {@code reqs_to_abort} (requests the frontend finished on a stop string) before
     * dropping their state: the reading of #15326's {@code _handle_finished_reqs} in lifecycle §1(d). Not upstream.
     */
    ORDERED_FINISH_ABORT(
            suite("#23697 (closed as stale; #24382's pending-abort state closed, not merged)",
                    "#15326's review (robertgshaw2-redhat: explain why the abort ordering matters for the race)",
                    "vllm/v1/engine/output_processor.py@d0782260 OutputProcessor.process_outputs: _finish_request(req_state) "
                            + "before reqs_to_abort.append(req_id); the ABORT is sent after process_outputs returns"),
            "the output handler sends ABORT for reqs_to_abort before dropping their frontend state"),
    /**
     * EngineCore sees internal ids (external id + a random suffix) and OutputProcessor maps external → internal ids;
     * abort by external id resolves to the internal ones.
     */
    UNIQUE_INTERNAL_IDS(
            merged("#27987", "vllm/v1/engine/input_processor.py@a1799180, output_processor.py@d0782260",
                    "InputProcessor.assign_request_id: request.request_id = f\"{request.external_req_id}-{random_uuid():.8}\""),
            "frontend-provided request ids get a unique suffix; EngineCore never sees one id twice"),
    /**
     * Seed 003 (#53049), direction (1): MultiConnector mirrors {@code _extra_async_saves} for loads; every child with an
     * async load of a request in flight is counted, and finished_recving is reported once, when the last load completes.
     */
    MULTI_CONNECTOR_LOAD_DEDUP(
            proposed("#53049 (open), direction (1)", "PRs #51595, #50546, #51864, #42841 open, none merged",
                    "multi_connector.py@a4a2a8ee MultiConnector.get_finished: finished_recving.update(recving or ())"),
            "MultiConnector reports finished_recving once, after the last in-flight async load of the request"),
    /**
     * Seed 003 (#53049), direction (2): the NIXL decode side pins the blocks of a normally finished request whose pull
     * is still in flight ({@code request_finished} returns True) and reports the late completion as finished_sending.
     */
    NIXL_PIN_PULL_BLOCKS(
            proposed("#53049 (open), direction (2)", "proposed in the report; no PR found",
                    "nixl/pull_scheduler.py@b36ea896 NixlPullConnectorScheduler.request_finished: "
                            + "if is_d_node and not self.is_bidirectional_kv_xfer_enabled: return False, None"),
            "NIXL decode side pins blocks while a pull is in flight and reports its late completion as finished_sending"),
    /**
     * #46865 (fixes #46951): {@code MultiConnector.update_state_after_alloc} gives the children it did not choose to load
     * the request's real blocks, with {@code num_external_tokens = 0} as the "do not load" signal, so a child that
     * tracks or offloads blocks sees the ones being loaded. Before it they got empty blocks and 0.
     */
    NON_CHOSEN_REAL_BLOCKS(
            merged("#46865", "vllm/distributed/kv_transfer/kv_connector/v1/multi_connector.py@00f4240e (before: @a4a2a8ee)",
                    "MultiConnector.update_state_after_alloc: other connectors still receive the request's real blocks "
                            + "(c.update_state_after_alloc(request, blocks, 0)); before: empty_blocks"),
            "MultiConnector hands its non-chosen children the real blocks with 0 external tokens"),
    /**
     * #47505: vLLM's in-tree {@code lmcache_mp_connector} starts a retrieve in {@code update_state_after_alloc} only when
     * it was given external tokens, so a non-chosen LMCache MP child (given the real blocks by #46865) does not load.
     * LMCache's own out-of-tree MP connector does not have it ({@link vllmrace.model.deploy.ConfigSwitch#OUT_OF_TREE_LMCACHE_MP}).
     */
    LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN(
            mergedFromDiff("#47505", "condition = tracker.needs_retrieve() -> condition = tracker.needs_retrieve() and "
                            + "num_external_tokens > 0; the last vLLM file version read is before it "
                            + "(lmcache_mp_connector.py@474b0b8c); the same guard is in LMCache's own copy at LMCache@0039822b",
                    "LMCacheMPConnector.update_state_after_alloc: condition = tracker.needs_retrieve() and num_external_tokens > 0"),
            "the in-tree LMCache MP connector loads only when it is the chosen child (num_external_tokens > 0)"),
    /**
     * Seed 003 (#53049), direction (3), defence in depth: {@code _update_from_kv_xfer_finished} warns and skips a
     * transfer report for an id no longer in {@code requests} (and a finished_recving for a request that no longer
     * waits for it) instead of asserting.
     */
    SCHEDULER_SKIP_LATE_REPORT(
            proposed("#53049 (open), direction (3)", "#53746 (closed), #37859, #46304, #56089 open; none merged",
                    "scheduler.py@00024d31 Scheduler._update_from_kv_xfer_finished: assert req_id in self.requests"),
            "Scheduler warns and skips late transfer reports instead of asserting"),
    /**
     * While a request's async load is in flight (as the scheduler side knows it: started at
     * {@code update_state_after_alloc}, not yet seen in {@code update_connector_output}'s finished_recving),
     * {@code MultiConnector.request_finished} hands the other children no blocks, since those blocks hold no complete KV
     * yet. No child starts a save, so an aborted load ends with one terminal event, its finished_recving.
     */
    NO_SAVE_WHILE_LOADING(
            suite("#46240 (open; scheduler-side PRs #46304 open, #47499 and #53079 closed)",
                    "njhill on #53079 (\"There should not be multiple completion events even in the case of abort ... a bug "
                            + "in the kv connector\") and orozery on #46304 (keep calling request_finished on abort); the "
                            + "MooncakeStore-only analogue #43371 is merged",
                    "multi_connector.py@a4a2a8ee MultiConnector.request_finished calls every child with the request's blocks"),
            "MultiConnector.request_finished gives the other children no blocks to save while the request's async load is in flight"),
    /**
     * {@code has_finished_requests} also counts finished requests still in {@code requests} for a connector's delayed
     * free, so {@code has_requests()} holds and the busy loop keeps stepping (and polling {@code get_finished}) until the
     * transfer that frees them is reported.
     */
    HAS_REQUESTS_COUNTS_DELAY_FREED(
            mergedFromDiff("#43433", "Scheduler.has_finished_requests: if self.finished_req_ids: return True; if self.connector is "
                            + "None: return False; return any(request.is_finished() for request in self.requests.values()) "
                            + "(was: len(self.finished_req_ids) > 0, scheduler.py@00024d31); a later fork copy "
                            + "(robertgshaw2-redhat/vllm@0201778e) reads len(self.requests) > num_in_queues instead, the same "
                            + "answer wherever a request outside the queues is a finished one; core.py's has_work @00080ee1",
                    "Scheduler.has_finished_requests: return any(request.is_finished() for request in self.requests.values())"),
            "has_requests() counts finished requests waiting for a delayed connector free, so the engine keeps polling"),
    /**
     * A request aborted while WAITING_FOR_REMOTE_KVS (its free delayed by #32255) is reclaimed
     * {@link vllmrace.model.sched.Scheduler#RECLAIM_GRACE_STEPS} steps later, longer than the connector's lease, by a
     * sweep in {@code update_from_output}; a finished_recving after the reclaim is ignored.
     */
    RECLAIM_ABORTED_RECV(
            proposed("#46283 (open)", "PR #46289 (open, not merged)",
                    "scheduler.py@00024d31 Scheduler.finish_requests delays the free of an aborted WAITING_FOR_REMOTE_KVS request; "
                            + "_update_from_kv_xfer_finished is its only release path"),
            "a request aborted while waiting for remote KVs is reclaimed after a grace period longer than the lease"),
    /**
     * Once the waiting scan has skipped a request that holds no blocks, it admits no async load behind it in that step
     * (the load waits, holding nothing), so a block-less request that cannot be allocated never strands blocks behind it.
     */
    NO_LOAD_BEHIND_BLOCKLESS(
            proposed("#57841 (open)", "PR #57841 (open; same end state: #57104 merged for MTP, #53130 open)",
                    "scheduler.py@00024d31 Scheduler.schedule: the waiting loop breaks at the first request it cannot allocate; "
                            + "skipped requests go back to the queue front in scan order"),
            "the waiting scan admits no async load behind a skipped request that holds no blocks"),
    /**
     * An ABORT consumed from {@code input_queue} removes its copy from {@code aborts_queue}, so a copy never applies after
     * a later ADD of the same id (each ABORT is applied once, whichever queue reaches it first).
     */
    ABORT_APPLIED_ONCE(
            suite("no upstream report; a hazard of #29987 under reused engine ids (VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1, "
                            + "#34415 merged; #45688 open would make it the P/D default)",
                    "core.py's own premise at process_input_sockets (\"This is ok because aborting in the scheduler is "
                            + "idempotent\"), which holds per request, not per id once ids are reused",
                    "core.py@ac3cb2e2 EngineCoreProc.process_input_sockets puts an ABORT in aborts_queue and input_queue; "
                            + "_handle_client_request re-applies it; aborts_queue is cleared only when idle"),
            "an ABORT applied from input_queue drops its aborts_queue copy, so it is applied once"),
    /**
     * Each async store job takes its own reference on the blocks it reads ({@code pool.touch} when
     * {@code build_connector_meta} emits it) and drops it when the job is done, so preemption, which calls no
     * {@code request_finished}, cannot free blocks a store job still reads.
     */
    STORE_JOB_BLOCK_REF(
            mergedFromDiff("#52372", "the PR text and review name _reference_save_blocks (fixes #52360, #51637); the vllm-project "
                            + "version read, mooncake/store/scheduler.py@673f4fd9, is before it; a later fork copy has it",
                    "MooncakeStoreConnectorScheduler._reference_save_blocks: pool.touch(blocks) per store_job_id; "
                            + "update_connector_output: pool.free_blocks(reversed(block_ids)) once every rank reported"),
            "each async store job holds its own reference on the blocks it reads until it is done"),
    /**
     * With a KV connector and steps in flight, a request's bookkeeping is dropped at once but its blocks' ref-count
     * decrement waits until the output of the newest step dispatched when it was freed (the fence) has been processed,
     * so no in-flight step writes a block another request was given.
     */
    DEFER_BLOCK_FREE(
            merged("#45357", "vllm/v1/core/sched/scheduler.py@00f4240e (Scheduler.__init__ defer_block_free; 00024d31 is before it)",
                    "Scheduler._free_request_blocks / _drain_deferred_frees, sched_step_seq, processed_step_seq, "
                            + "Request.last_sched_seq; KVCacheManager.pop_blocks_for_free"),
            "the blocks of a request freed while a step that scheduled it is in flight return only after that step is processed"),
    /**
     * #49675 (fixes #49674): under #45357's deferral a preempted victim still fenced behind an in-flight step returns no
     * block to the allocation retry that preempted it, so one failed allocation preempts every running request, itself
     * last, and the next step re-admits them: zero progress while the pool is short. The retry now applies the deferral
     * predicate to the victim FCFS selected before it touches the running queue; when the victim's free is fenced, the
     * retry stops (this request is not scheduled this step; nothing is preempted).
     */
    STOP_PREEMPTION_AT_FENCED_VICTIM(
            mergedFromDiff("#49675", "the PR text gives _should_defer_request_block_free(request) = self.defer_block_free and "
                            + "request.last_sched_seq > self.processed_step_seq, applied to the selected victim before the running "
                            + "queue is mutated; scheduler.py@00f4240e, the latest version read here, is before it",
                    "Scheduler.schedule, running-request allocation retry: a fenced victim stops the retry; no victim removal, "
                            + "status transition or preemption accounting"),
            "a running request whose allocation fails does not preempt a victim whose blocks are fenced behind an in-flight step"),
    /**
     * #48245's lossless stale marking: {@code _preempt_request} sets {@code num_stale_output_tokens = num_in_flight_tokens}
     * and {@code num_output_placeholders = 0}; {@code update_from_output} drains each in-flight step's share and delivers
     * its tokens without decrementing the reset placeholders ({@code is_stale}), and the waiting loop holds back a resume
     * while deliverable stale output is in flight. Without it (scheduler.py@00024d31) the preemption leaves the
     * placeholders of the in-flight steps counted, and a resume before they return is classed a prefill chunk.
     */
    STALE_OUTPUT_AFTER_PREEMPT(
            merged("#48245", "vllm/v1/core/sched/scheduler.py@003df296 (#48245 by njhill reworks #47900; also in v0.27.1)",
                    "Scheduler._preempt_request: request.num_stale_output_tokens = request.num_in_flight_tokens; "
                            + "request.num_output_placeholders = 0; AsyncScheduler._update_request_with_output: if not is_stale: "
                            + "request.num_output_placeholders -= len(new_token_ids); assert request.num_output_placeholders >= 0"),
            "a preemption marks the in-flight output stale: it is delivered without draining the reset placeholders"),
    /**
     * #50297: a connector that hands KV off ({@code requires_kv_delivery}, the producer role) has a preempted request's
     * in-flight output dropped ({@code drop_stale_output}), so a request preempted in its final step is requeued and
     * recomputed instead of finishing with the blocks the preemption freed. Acts through
     * {@link #STALE_OUTPUT_AFTER_PREEMPT}'s stale marking, as upstream (#50297 is built on #48245).
     */
    REQUIRES_KV_DELIVERY(
            merged("#50297", "kv_connector/v1/base.py, multi_connector.py and vllm/v1/core/sched/scheduler.py@00f4240e (#50297 by "
                            + "njhill replaces #48141; also in v0.27.1)",
                    "Scheduler.schedule: self._preempt_request(preempted_req, scheduled_timestamp, "
                            + "drop_stale_output=self.requires_kv_delivery); update_from_output: if output_is_stale and "
                            + "request.drop_stale_output: continue; KVConnectorBase_V1.requires_kv_delivery: "
                            + "return self._kv_transfer_config.is_kv_producer"),
            "a KV producer's preempted request drops its stale output and is recomputed, so its hand-off has blocks"),
    /**
     * #54518: the NIXL decode worker no longer asserts when a pull it already reported (one handle failed) is reported
     * again (a sibling handle failed or finished in a later poll): the repeat is dropped from {@code done_recving}.
     */
    FAILED_RECV_REPORTED_ONCE(
            mergedFromText("#54518", "\"tolerates the missing metadata and drops the repeat from done_recving\"; "
                            + "nixl/base_worker.py@00bd5131 is before it; @d80b52aa, after #56104, asserts again, the repeat being "
                            + "impossible there",
                    "NixlBaseConnectorWorker.get_finished: meta = self._recving_metadata.pop(req_id, None); "
                            + "assert meta is not None (before); the repeat dropped instead (after)"),
            "the NIXL decode worker drops a repeated report of a pull instead of asserting"),
    /**
     * #56104: a pull with several NIXL handles (heterogeneous TP) reports its failure, and invalidates its blocks, only
     * once every handle stopped: a sibling handle's posted RDMA writes cannot be aborted.
     */
    DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP(
            merged("#56104", "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py@d80b52aa",
                    "NixlBaseConnectorWorker.get_transfer_results: failures kept in self._recv_failures; "
                            + "elif req_id not in self._recving_transfers: failed_recv_reqs.add(req_id); "
                            + "self._invalid_block_ids.put(...) once the request is reported"),
            "a NIXL pull's failure is reported, its blocks invalidated, only after every handle of it stopped"),
    /**
     * #57570: a notification-only receive (an abort before scheduling, a full local prefix hit) is kept out of the
     * worker's receive tracking, so a failed handshake for its notification reports nothing for an id the scheduler
     * already removed.
     */
    NOTIF_ONLY_NOT_RECV_TRACKED(
            merged("#57570", "vllm/distributed/kv_transfer/kv_connector/v1/nixl/pull_worker.py@d80b52aa",
                    "NixlPullConnectorWorker.start_load_kv: if meta.awaiting_kvs or any(meta.local_block_ids): "
                            + "self._recving_metadata[req_id] = meta (@0316d25, before: always stored, \"always store metadata "
                            + "for failure recovery\"); base_worker.py@d80b52aa get_transfer_results drops a failure without metadata"),
            "a NIXL notification-only receive is not tracked as a receive: its failed handshake reports nothing"),
    /**
     * #53903 (merged): a NIXL producer worker on a replicated-KV PCP rank above 0 (which serves no reads: rank 0 does)
     * reports the requests it is asked to send as finished as soon as the connector metadata arrives, and
     * {@code get_finished_count()} is back to the world size. Before it (#52779) such a rank cleared {@code done_sending}
     * and NIXL's count was TP x PP, which a MultiConnector with a sibling whose count is None discards.
     */
    PCP_REPLICA_REPORTS_SENT(
            mergedFromText("#53903", "\"ranks > 0 report the requests they are asked to send as finished as soon as the "
                            + "connector metadata arrives, and get_finished_count() is back to world_size\"; before it #52779's "
                            + "nixl/connector.py get_finished: if kv_role == \"kv_producer\" and pcp_rank > 0: done_sending.clear(); "
                            + "a stored pull_worker.py (commit unknown) has it: start_load_kv: if self.pcp_rank > 0 and not "
                            + "self.pcp_dcp_sharded: self._replicated_pcp_done_sending.update(metadata.reqs_to_send); return",
                    "NixlPullConnectorWorker.start_load_kv on a replicated PCP rank > 0 reports reqs_to_send as done sending; "
                            + "NixlConnector.get_finished_count no longer overridden"),
            "a NIXL producer on a replicated PCP rank > 0 reports the requests to send as done sending when the metadata arrives"),
    /**
     * #47046 (open; its duplicate #46960 open too; issue #46951): {@code OffloadingConnectorScheduler.update_state_after_alloc}
     * records the blocks it is given in {@code _current_batch_allocated_block_ids} also when {@code num_external_tokens
     * == 0}, so blocks MultiConnector hands a non-chosen offloader (the real ones since #46865) reach its reuse check, and
     * a pending store job over a reallocated block is flushed (the worker waits for it) before the new owner's load.
     */
    OFFLOAD_FENCE_NON_CHOSEN_BLOCKS(
            proposed("#47046", "open (duplicate #46960 open too), for issue #46951",
                    "offloading/scheduler.py (stored copy, commit unknown; the context of #47046's diff) "
                            + "OffloadingConnectorScheduler.update_state_after_alloc: if num_external_tokens == 0: return, before "
                            + "self._current_batch_allocated_block_ids.update(...)"),
            "the offloading connector records blocks given with 0 external tokens, so its reuse fence flushes their pending stores"),
    /**
     * #51629 (open): {@code OutputProcessor.abort_requests} releases a parent request with its last child when the
     * children are aborted by their external (or internal) ids; upstream pops only the children's states there, and the
     * parent stays in {@code parent_requests} for the life of the engine.
     */
    PARENT_RELEASED_ON_ABORT(
            proposed("#51629", "open",
                    "vllm/v1/engine/output_processor.py@d0782260 OutputProcessor.abort_requests: the `if req_state is not None:` "
                            + "branch pops request_states only; parent_requests is popped in the `elif parent := "
                            + "self.parent_requests.get(request_id)` branch (an abort by the parent's own id) and in _finish_request"),
            "OutputProcessor.abort_requests drops a parent request with its last aborted child"),
    /**
     * #39366 (merged): the two-phase DP pause. {@code pause_scheduler} on a DP rank keeps it stepping dummy batches with
     * {@code pending_pause} until every rank reaches pause consensus in the {@code sync_dp_state} all-reduce; from then
     * on the rank ignores {@code START_DP_WAVE}, so a stale wave cannot wake one paused rank alone.
     */
    DP_TWO_PHASE_PAUSE(
            mergedFromText("#39366", "\"_pause_complete: self.pending_pause = True; self.engines_running = True; return False\"; "
                            + "\"if pause_consensus: self.ignore_start_dp_wave = True\"; START_DP_WAVE: \"if self.ignore_start_dp_wave: "
                            + "return\" (vllm/v1/engine/core.py DPEngineCoreProc, read in verbatim copies of the merged code)",
                    "DPEngineCoreProc pauses only at all-rank consensus and then ignores START_DP_WAVE"),
            "a DP rank's pause completes at all-rank consensus, after which START_DP_WAVE is ignored"),
    /**
     * #51481 (merged; part 1 of RFC #51476): the DP coordinator no longer sets {@code engines_running = True} when it
     * forwards a front-end wake ("True is a prediction. False is an observation."); True comes only from an engine that
     * reports it started a wave.
     */
    DP_WAKE_DOES_NOT_ASSUME_RUNNING(
            mergedFromText("#51481", "\"Don't assume the engines started when forwarding a wake\"; before it "
                            + "vllm/v1/engine/coordinator.py@de4c1fcb: if not self.engines_running: ... self.engines_running = True; "
                            + "self._send_start_wave(publish_back, self.current_wave, engine_to_exclude)",
                    "DPCoordinatorProc forwards START_DP_WAVE on a front-end wake without setting engines_running"),
            "the DP coordinator sets engines_running only when an engine reports it started a wave"),
    /**
     * #53861 (open), its bug 1: {@code RequestOutputCollector} becomes a small deque that never merges a new output into
     * an entry that is finished or carries a {@code finish_reason}, so a streaming-input session's chunk boundary reaches
     * the caller however far the producer runs ahead.
     */
    COLLECTOR_KEEPS_BOUNDARIES(
            proposed("#53861", "open",
                    "vllm/v1/engine/output_processor.py@d0782260 RequestOutputCollector.put: if self.output is None ...: "
                            + "self.output = output; elif isinstance(self.output, RequestOutput) ...: self.output.add(output, "
                            + "aggregate=self.aggregate); vllm/outputs.py RequestOutput.add: completion.finish_reason = "
                            + "next_completion.finish_reason"),
            "RequestOutputCollector.put never merges into an output that carries a finish reason"),
    /**
     * #50789 (open; issue #58222): the NIXL worker's lease reaper scans every lease instead of stopping at the first that
     * has not expired, since heartbeats renew a lease in place and the map is not ordered by expiry.
     */
    REAP_EVERY_EXPIRED_LEASE(
            proposed("#50789 (open; issue #58222, open)", "open, not merged; a stored base_worker.py@039e79a6 has it, its branch unknown",
                    "base_worker.py@039e79a6 _reap_expired_send_leases: expired = [req_id for req_id, expires in "
                            + "self._reqs_to_send.items() if now >= expires] (@d80b52aa: while ... if now < expires: break)"),
            "the NIXL lease reaper releases every expired lease, not only those ahead of the first live one"),
    /**
     * #44101 (open; issue #44100): the LMCache MP connector's {@code _cleanup_request_tracker} frees the lookup's read
     * locks ({@code cleanup_lookup_result}, {@code free_lookup_locks}) when the tracker is still PREFETCHING.
     */
    FREE_LOOKUP_LOCKS_ON_CLEANUP(
            proposed("#44100 (open)", "PR #44101 (open, not merged; #44129 closed as a duplicate)",
                    "lmcache_mp_connector.py@474b0b8c _cleanup_request_tracker: if self.request_trackers.pop(request_id, None): "
                            + "(a debug log, nothing else); cleanup_lookup_result / free_lookup_locks only in update_state_after_alloc's "
                            + "PREFETCHING branch"),
            "the LMCache MP connector frees a PREFETCHING request's lookup locks when its tracker is cleaned up"),
    /**
     * LMCache #4938: a request aborted while the LMCache MP connector's own retrieve of it is in flight gets a made-up
     * finished_sending next to the retrieve's finished_recving. The fix keeps the tracker LOADING until finished_recving
     * and does not report an aborted retrieve as a store completion, so the finished_recving is its one terminal event.
     */
    LMCACHE_MP_ABORTED_RETRIEVE_NOT_STORED(
            proposed("LMCache #4938 (open)", "LMCache PR #4939 (open, not merged; it rebases #4136, open); #4284 (closed) "
                            + "dedups only a same-poll pair",
                    "LMCache vllm_multi_process_adapter.py@39d632ad LMCacheMPWorkerAdapter.get_finished: an engine-finished id "
                            + "with no store future goes into ret_stores; lmcache_mp_connector.py@474b0b8c request_finished "
                            + "returns True"),
            "the LMCache MP connector reports an aborted retrieve once, by its finished_recving, with no made-up store completion"),
    /**
     * #47021: in a bidirectional KV transfer the decode side advertises its held blocks' expiry, and the prefill side
     * declines a turn-2 READ near it instead of reading blocks the decode side may have reused.
     */
    TURN2_READ_EXPIRY_CHECK(
            merged("#47021", "vllm/distributed/kv_transfer/kv_connector/v1/nixl/pull_worker.py@d80b52aa",
                    "if self._bidirectional_kv_xfer_enabled and self._is_turn2_read_expired(meta): (Declining expired remote read); "
                            + "pull_scheduler.py@0050936b request_finished: remote_blocks_expiry_time if is_d_node; NIXL_CONNECTOR_VERSION 4 -> 5"),
            "a bidirectional NIXL turn-2 READ is declined near the decode side's advertised block expiry"),
    /**
     * The suite's proposal for LeaseExpiredReadAfterFree, following #47021 (merged for the bidirectional turn-2 read):
     * the prefill side advertises its blocks' lease expiry in {@code kv_transfer_params}, and the decode side declines a
     * READ at or after it (the read fails; {@code kv_load_failure_policy} applies), instead of copying whatever the freed
     * blocks hold.
     */
    /**
     * The suite's proposal for #50425: {@code AsyncLLM.generate}'s cancellation handler, when the request never reached
     * {@code add_request}'s end ({@code q is None}) and carries {@code do_remote_prefill}, sends #41269's rejection notice
     * ({@code notify_kv_transfer_request_rejected}), so the prefill side releases the blocks it holds for it.
     */
    NOTIFY_REJECT_ON_PRE_ADD_CANCEL(
            suite("#50425 (open; no PR)",
                    "#41269 (merged: notify_kv_transfer_request_rejected on every pre-admission rejection path with do_remote_prefill)",
                    "async_llm.py@00080ee1 generate: except (asyncio.CancelledError, GeneratorExit): if q is not None: await "
                            + "self.abort(q.request_id, internal=True); with q None nothing reaches the engine or the prefill side"),
            "a decode request cancelled before its EngineCore add sends the prefill side the rejection notice"),
    DECLINE_EXPIRED_REMOTE_READ(
            suite("LeaseExpiredReadAfterFree (aws-samples/aws-do-eks#84, vllm-project/aibrix#1772; no upstream issue found)",
                    "#47021 (merged: D advertises its blocks' expiry, P declines a turn-2 read near it)",
                    "pull_worker.py@d80b52aa: if self._bidirectional_kv_xfer_enabled and self._is_turn2_read_expired(meta): the "
                            + "only expiry check before a READ; pull_scheduler.py@0050936b sets remote_blocks_expiry_time only if is_d_node"),
            "a NIXL decode side declines a READ past the prefill side's advertised lease expiry"),
    /**
     * #50754 (open; row C2 of #48633): a NIXL push producer that fails to post a WRITE sends a PUSH_FAIL notification in
     * its place, so the decode side's count completes and it fails the request instead of waiting.
     */
    PUSH_FAILURE_NOTIFIED(
            proposed("#50754 (open; row C2 of inventory #48633)", "open, not merged",
                    "push_worker.py@8cc02e7f _xfer_blocks, on a post failure: release_xfer_handle(handle); record_failed_transfer(); "
                            + "return None (nothing sent to D); its shape in YannikHinteregger/vllm@5cb2a379: PUSH_FAIL_NOTIF_PREFIX, "
                            + "_count_consumer_notif(req_id, producer_tp_size, failed_write), _fail_incomplete_push"),
            "a NIXL push post failure reaches the decode side, which fails the request instead of waiting"),
    /**
     * #58188 (open): a NIXL push producer reports a push whose every WRITE handle completed as {@code finished_sending},
     * judged by its own send state; after #56104 the done pushes were filtered through the receive metadata, which on the
     * producer holds no request, so the source blocks waited for the lease.
     */
    PUSH_SEND_REPORTED_PER_DIRECTION(
            proposed("#58188 (open)", "open, not merged (a regression of #56104)",
                    "the PR's description: successful push WRITEs \"are filtered through _recving_metadata, which tracks incoming "
                            + "requests\"; push_worker.py@039e79a6 get_transfer_results (its shape): successful = {req_id for req_id in "
                            + "done_pushing - self._send_failures if req_id in self._reqs_to_send or req_id in self._reqs_to_process}"),
            "a NIXL push producer reports a completed push by its own send state, not through the receive metadata");

    private final Provenance provenance;
    private final String description;

    Fix(Provenance provenance, String description) {
        this.provenance = provenance;
        this.description = description;
    }

    /** Merged, proposed or the suite's, with the upstream reference and evidence. */
    public Provenance provenance() {
        return provenance;
    }

    /** The upstream PR or report that introduced (or proposed) this fix. */
    public String upstream() {
        return provenance.reference();
    }

    public String description() {
        return description;
    }

    /**
     * The fixes this one acts through, as upstream built its PR on theirs: on without them, the switch does not model its
     * PR (#50297's {@code drop_stale_output} uses #48245's stale marking). The hunt switches them on with it.
     */
    public java.util.Set<Fix> builtOn() {
        return switch (this) {
            case REQUIRES_KV_DELIVERY -> java.util.EnumSet.of(STALE_OUTPUT_AFTER_PREEMPT);
            // #4939 leaves an aborted retrieve's finished_recving as its one terminal event: only #32255's scheduler frees
            // an aborted request on finished_recving (before it, a True from request_finished waits for finished_sending)
            case LMCACHE_MP_ABORTED_RETRIEVE_NOT_STORED -> java.util.EnumSet.of(DELAY_FREE_ABORTED_LOAD);
            default -> java.util.EnumSet.noneOf(Fix.class);
        };
    }
}
