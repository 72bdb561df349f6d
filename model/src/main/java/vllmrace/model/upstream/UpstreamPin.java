package vllmrace.model.upstream;

/**
 * The upstream functions the model mirrors, one constant each: repository-relative file, qualified name
 * ({@code Class.def}, or a module-level {@code def}), the commit of the file version the model was written from, the
 * fingerprint of that function's text there, and the merged PRs the model adds on top of that version, read from their
 * diffs ({@link #plusPrs}: "this file version, plus these PRs") (SHA-256 of its lines without blank and comment-only lines, first 16 hex
 * digits; {@code vllmrace.catalogue.drift.Fingerprint}). The model method that mirrors one begins with
 * {@code UpstreamPins.enter(UpstreamPin.X)}; {@code ./catalogue --drift PATH} finds each function in a vLLM checkout and
 * says whether it changed since its pin, and results/upstream-pins.md says which races go through it.
 *
 * <p>{@code ParentRequest.get_outputs} is pinned at 491d9235, the one version stored; the model follows PR #28591, which
 * changed it after that commit (see {@code ParentRequest}). The scheduler's functions are pinned at 00024d31, before
 * #45357, #48245 and #50297, which the model mirrors from their diffs. The NIXL decode worker is pinned at 00bd5131,
 * before #54518 (mirrored from its description; its diff was not read) and #56104 (mirrored from base_worker.py@d80b52aa,
 * a later version that has it).
 */
public enum UpstreamPin {
    SCHEDULER_ADD_REQUEST("vllm/v1/core/sched/scheduler.py", "Scheduler.add_request", "00024d314514900f361ad072af6931e403b7f589", "a6ca057c1cd98b8f"),
    SCHEDULER_FINISH_REQUESTS("vllm/v1/core/sched/scheduler.py", "Scheduler.finish_requests", "00024d314514900f361ad072af6931e403b7f589", "bbcf568c1d8f0d3f", "#35781"),
    SCHEDULER_SCHEDULE("vllm/v1/core/sched/scheduler.py", "Scheduler.schedule", "00024d314514900f361ad072af6931e403b7f589", "b29963c32b6c668f", "#35781", "#45357", "#48245", "#49675", "#50297"),
    SCHEDULER_UPDATE_AFTER_SCHEDULE("vllm/v1/core/sched/scheduler.py", "Scheduler._update_after_schedule", "00024d314514900f361ad072af6931e403b7f589", "35a3f86781f0b0e7", "#45357"),
    SCHEDULER_UPDATE_WAITING_FOR_REMOTE_KV("vllm/v1/core/sched/scheduler.py", "Scheduler._update_waiting_for_remote_kv", "00024d314514900f361ad072af6931e403b7f589", "eae3623c5531bf2b"),
    SCHEDULER_UPDATE_FROM_OUTPUT("vllm/v1/core/sched/scheduler.py", "Scheduler.update_from_output", "00024d314514900f361ad072af6931e403b7f589", "fb7622e8148e9cfc", "#45357", "#48245", "#50297"),
    SCHEDULER_UPDATE_FROM_KV_XFER_FINISHED("vllm/v1/core/sched/scheduler.py", "Scheduler._update_from_kv_xfer_finished", "00024d314514900f361ad072af6931e403b7f589", "b3330884f6149388"),
    SCHEDULER_HANDLE_INVALID_BLOCKS("vllm/v1/core/sched/scheduler.py", "Scheduler._handle_invalid_blocks", "00024d314514900f361ad072af6931e403b7f589", "79dd75d60d35026f"),
    SCHEDULER_UPDATE_REQUESTS_WITH_INVALID_BLOCKS("vllm/v1/core/sched/scheduler.py", "Scheduler._update_requests_with_invalid_blocks", "00024d314514900f361ad072af6931e403b7f589", "69e7f5961432d7ea"),
    SCHEDULER_FREE_REQUEST("vllm/v1/core/sched/scheduler.py", "Scheduler._free_request", "00024d314514900f361ad072af6931e403b7f589", "6037a9896a3fa294"),
    SCHEDULER_CONNECTOR_FINISHED("vllm/v1/core/sched/scheduler.py", "Scheduler._connector_finished", "00024d314514900f361ad072af6931e403b7f589", "85f051b40a37e389"),
    SCHEDULER_FREE_BLOCKS("vllm/v1/core/sched/scheduler.py", "Scheduler._free_blocks", "00024d314514900f361ad072af6931e403b7f589", "256642c33682c7fb", "#45357"),
    SCHEDULER_PREEMPT_REQUEST("vllm/v1/core/sched/scheduler.py", "Scheduler._preempt_request", "00024d314514900f361ad072af6931e403b7f589", "df17c46c79d05677", "#45357", "#48245"),
    SCHEDULER_HAS_FINISHED_REQUESTS("vllm/v1/core/sched/scheduler.py", "Scheduler.has_finished_requests", "00024d314514900f361ad072af6931e403b7f589", "6aac173710282a24", "#43433"),
    CHECK_STOP("vllm/v1/core/sched/utils.py", "check_stop", "6110ea2910f2b99edfec706a8f72ba827d9b7631", "28b282a40754c9db"),
    KV_CACHE_MANAGER_ALLOCATE_SLOTS("vllm/v1/core/kv_cache_manager.py", "KVCacheManager.allocate_slots", "ace980e6de0540f49b0c63248437a1a7807590c1", "2ac356de967dabe0"),
    KV_CACHE_MANAGER_FREE("vllm/v1/core/kv_cache_manager.py", "KVCacheManager.free", "ace980e6de0540f49b0c63248437a1a7807590c1", "7c0cac61cb77f409"),
    KV_CACHE_MANAGER_GET_BLOCK_IDS("vllm/v1/core/kv_cache_manager.py", "KVCacheManager.get_block_ids", "ace980e6de0540f49b0c63248437a1a7807590c1", "4edf437a4dc4dc62"),
    BLOCK_POOL_GET_NEW_BLOCKS("vllm/v1/core/block_pool.py", "BlockPool.get_new_blocks", "c59cb7941357443da7c5eef75cfa8697d683d228", "3b11ce1fb5795c6c"),
    BLOCK_POOL_FREE_BLOCKS("vllm/v1/core/block_pool.py", "BlockPool.free_blocks", "c59cb7941357443da7c5eef75cfa8697d683d228", "70a6343ce77d0d92"),
    BLOCK_POOL_TOUCH("vllm/v1/core/block_pool.py", "BlockPool.touch", "c59cb7941357443da7c5eef75cfa8697d683d228", "f7701960616aa4ff"),
    ENGINE_CORE_ADD_REQUEST("vllm/v1/engine/core.py", "EngineCore.add_request", "ac3cb2e2eca80290181abb9365d572af6d287473", "8e6b549026c57630"),
    ENGINE_CORE_ABORT_REQUESTS("vllm/v1/engine/core.py", "EngineCore.abort_requests", "ac3cb2e2eca80290181abb9365d572af6d287473", "359f10039ddb972b"),
    ENGINE_CORE_STEP("vllm/v1/engine/core.py", "EngineCore.step", "ac3cb2e2eca80290181abb9365d572af6d287473", "1c56254e6f49bb3f"),
    ENGINE_CORE_STEP_WITH_BATCH_QUEUE("vllm/v1/engine/core.py", "EngineCore.step_with_batch_queue", "ac3cb2e2eca80290181abb9365d572af6d287473", "d75a162c6c1d31d0"),
    ENGINE_CORE_PROCESS_ABORTS_QUEUE("vllm/v1/engine/core.py", "EngineCore._process_aborts_queue", "ac3cb2e2eca80290181abb9365d572af6d287473", "7e24d8cf7f25f065"),
    ENGINE_CORE_PROC_PROCESS_INPUT_SOCKETS("vllm/v1/engine/core.py", "EngineCoreProc.process_input_sockets", "ac3cb2e2eca80290181abb9365d572af6d287473", "f4f27a5ce76423a4"),
    ENGINE_CORE_PROC_PROCESS_INPUT_QUEUE("vllm/v1/engine/core.py", "EngineCoreProc._process_input_queue", "ac3cb2e2eca80290181abb9365d572af6d287473", "547e1f3580f061b7"),
    ENGINE_CORE_PROC_HANDLE_CLIENT_REQUEST("vllm/v1/engine/core.py", "EngineCoreProc._handle_client_request", "ac3cb2e2eca80290181abb9365d572af6d287473", "ff0f77c6690b6e20"),
    ENGINE_CORE_PROC_RUN_BUSY_LOOP("vllm/v1/engine/core.py", "EngineCoreProc.run_busy_loop", "ac3cb2e2eca80290181abb9365d572af6d287473", "ebaac9b396cdbf39"),
    ASYNC_LLM_ADD_REQUEST("vllm/v1/engine/async_llm.py", "AsyncLLM.add_request", "8ef0b5f50994abaef30bca67b5ec167e5187b99b", "f64481e7e184926a"),
    ASYNC_LLM_ADD_REQUEST_INNER("vllm/v1/engine/async_llm.py", "AsyncLLM._add_request", "8ef0b5f50994abaef30bca67b5ec167e5187b99b", "c9af262df253bc1b"),
    ASYNC_LLM_ABORT("vllm/v1/engine/async_llm.py", "AsyncLLM.abort", "8ef0b5f50994abaef30bca67b5ec167e5187b99b", "40efbcddc85518ce"),
    ASYNC_LLM_OUTPUT_HANDLER("vllm/v1/engine/async_llm.py", "AsyncLLM._run_output_handler.output_handler", "8ef0b5f50994abaef30bca67b5ec167e5187b99b", "1b4b5588a507088f"),
    INPUT_PROCESSOR_ASSIGN_REQUEST_ID("vllm/v1/engine/input_processor.py", "InputProcessor.assign_request_id", "a1799180e1fc12d2e900c767d7c619a10ceb9467", "a5e46ca37ceda845"),
    OUTPUT_PROCESSOR_ADD_REQUEST("vllm/v1/engine/output_processor.py", "OutputProcessor.add_request", "d07822605346f767b672503c9aae85aa23ef2d82", "304636253508a1ba"),
    OUTPUT_PROCESSOR_ABORT_REQUESTS("vllm/v1/engine/output_processor.py", "OutputProcessor.abort_requests", "d07822605346f767b672503c9aae85aa23ef2d82", "d3d6104082d9364c"),
    OUTPUT_PROCESSOR_PROCESS_OUTPUTS("vllm/v1/engine/output_processor.py", "OutputProcessor.process_outputs", "d07822605346f767b672503c9aae85aa23ef2d82", "e5bc45093aaecb5f"),
    OUTPUT_PROCESSOR_FINISH_REQUEST("vllm/v1/engine/output_processor.py", "OutputProcessor._finish_request", "d07822605346f767b672503c9aae85aa23ef2d82", "3e50c7e956ae9492"),
    REQUEST_OUTPUT_COLLECTOR_PUT("vllm/v1/engine/output_processor.py", "RequestOutputCollector.put", "d07822605346f767b672503c9aae85aa23ef2d82", "e4ca325d114f8c25"),
    PARENT_REQUEST_GET_CHILD_INFO("vllm/v1/engine/parallel_sampling.py", "ParentRequest.get_child_info", "491d923514ad9c40e665dc8deae57dd377cb88b0", "e01511fc2ce025e1"),
    PARENT_REQUEST_GET_OUTPUTS("vllm/v1/engine/parallel_sampling.py", "ParentRequest.get_outputs", "491d923514ad9c40e665dc8deae57dd377cb88b0", "54f6fd7c543db685", "#28591"),
    MULTI_CONNECTOR_GET_NUM_NEW_MATCHED_TOKENS("vllm/distributed/kv_transfer/kv_connector/v1/multi_connector.py", "MultiConnector.get_num_new_matched_tokens", "00f4240ee6458263d76cf51ca7901ce1350bb4d1", "6a233d291e5288fb"),
    MULTI_CONNECTOR_UPDATE_STATE_AFTER_ALLOC("vllm/distributed/kv_transfer/kv_connector/v1/multi_connector.py", "MultiConnector.update_state_after_alloc", "00f4240ee6458263d76cf51ca7901ce1350bb4d1", "a38a0895fc98d288"),
    MULTI_CONNECTOR_AGGREGATE_REQUEST_FINISHED("vllm/distributed/kv_transfer/kv_connector/v1/multi_connector.py", "MultiConnector._aggregate_request_finished", "00f4240ee6458263d76cf51ca7901ce1350bb4d1", "32be6aa721ca354c"),
    MULTI_CONNECTOR_GET_TRANSFER_RESULTS("vllm/distributed/kv_transfer/kv_connector/v1/multi_connector.py", "MultiConnector.get_transfer_results", "00f4240ee6458263d76cf51ca7901ce1350bb4d1", "72a3d5e438016c7f"),
    MULTI_CONNECTOR_BUILD_CONNECTOR_META("vllm/distributed/kv_transfer/kv_connector/v1/multi_connector.py", "MultiConnector.build_connector_meta", "00f4240ee6458263d76cf51ca7901ce1350bb4d1", "7a3cd214beb17363"),
    MULTI_CONNECTOR_UPDATE_CONNECTOR_OUTPUT("vllm/distributed/kv_transfer/kv_connector/v1/multi_connector.py", "MultiConnector.update_connector_output", "00f4240ee6458263d76cf51ca7901ce1350bb4d1", "e9027bc8c38053f1"),
    MULTI_CONNECTOR_REQUIRES_KV_DELIVERY("vllm/distributed/kv_transfer/kv_connector/v1/multi_connector.py", "MultiConnector.requires_kv_delivery", "00f4240ee6458263d76cf51ca7901ce1350bb4d1", "53ef940098cfdd87"),
    KV_CONNECTOR_BASE_REQUIRES_KV_DELIVERY("vllm/distributed/kv_transfer/kv_connector/v1/base.py", "KVConnectorBase_V1.requires_kv_delivery", "00f4240ee6458263d76cf51ca7901ce1350bb4d1", "b583c5eda20e836d"),
    KV_TRANSFER_CONFIG_IS_KV_PRODUCER("vllm/config/kv_transfer.py", "KVTransferConfig.is_kv_producer", "9dc4946457fb6963f05e08b04382013a745cad8a", "8d83621e511dee47"),
    KV_TRANSFER_CONFIG_IS_KV_CONSUMER("vllm/config/kv_transfer.py", "KVTransferConfig.is_kv_consumer", "9dc4946457fb6963f05e08b04382013a745cad8a", "180e6b25c81b784e"),
    ASYNC_SCHEDULER_UPDATE_AFTER_SCHEDULE("vllm/v1/core/sched/async_scheduler.py", "AsyncScheduler._update_after_schedule", "014b23503270d029739d400ec4c14ba0714bdcd8", "34a3af9e87453383"),
    /** The model reads #48245's {@code is_stale} (no stored async_scheduler.py has it) from the scheduler side of its diff. */
    ASYNC_SCHEDULER_UPDATE_REQUEST_WITH_OUTPUT("vllm/v1/core/sched/async_scheduler.py", "AsyncScheduler._update_request_with_output", "014b23503270d029739d400ec4c14ba0714bdcd8", "07a224bbdd148023", "#48245"),
    KV_OUTPUT_AGGREGATOR_AGGREGATE("vllm/distributed/kv_transfer/kv_connector/utils.py", "KVOutputAggregator.aggregate", "00f4240ee6458263d76cf51ca7901ce1350bb4d1", "093ac89530331f43"),
    /** The in-tree LMCache MP connector before #47505 (the model adds its guard as {@code LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN}). */
    LMCACHE_MP_UPDATE_STATE_AFTER_ALLOC("vllm/distributed/kv_transfer/kv_connector/v1/lmcache_mp_connector.py", "LMCacheMPConnector.update_state_after_alloc", "474b0b8c8b9676e34d101f4f1f8d94860a99fd7f", "6cdd94a78e832e9b", "#47505"),
    NIXL_PULL_UPDATE_STATE_AFTER_ALLOC("vllm/distributed/kv_transfer/kv_connector/v1/nixl/pull_scheduler.py", "NixlPullConnectorScheduler.update_state_after_alloc", "b36ea89655c72f402aae2bcf08208c8841586a8e", "71ea360233c3c802"),
    NIXL_PULL_REQUEST_FINISHED("vllm/distributed/kv_transfer/kv_connector/v1/nixl/pull_scheduler.py", "NixlPullConnectorScheduler.request_finished", "b36ea89655c72f402aae2bcf08208c8841586a8e", "6e492a1518b2255b"),
    NIXL_WORKER_GET_FINISHED("vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py", "NixlBaseConnectorWorker.get_finished", "00bd51312724dc9984e7eaa16fa741863db25c97", "0d13d6453b0972b1", "#54518", "#56104"),
    NIXL_WORKER_POP_DONE_TRANSFERS("vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py", "NixlBaseConnectorWorker._pop_done_transfers", "00bd51312724dc9984e7eaa16fa741863db25c97", "76f913cddd3ed791", "#56104"),
    NIXL_WORKER_HANDLE_FAILED_TRANSFER("vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py", "NixlBaseConnectorWorker._handle_failed_transfer", "00bd51312724dc9984e7eaa16fa741863db25c97", "a141a7d340b3c142", "#56104"),
    REQUEST_IS_FINISHED("vllm/v1/request.py", "Request.is_finished", "dba83d52c06471eabafba4310718ac7a100cbfa4", "7cbc23e4dbe51b6e");

    private final String file;
    private final String qualname;
    private final String commit;
    private final String fingerprint;
    private final java.util.List<String> plusPrs;

    UpstreamPin(String file, String qualname, String commit, String fingerprint, String... plusPrs) {
        this.file = file;
        this.qualname = qualname;
        this.commit = commit;
        this.fingerprint = fingerprint;
        this.plusPrs = java.util.List.of(plusPrs);
    }

    /** Repository-relative path of the upstream file, e.g. {@code vllm/v1/core/sched/scheduler.py}. */
    public String file() {
        return file;
    }

    /** {@code Class.def} (or a module-level {@code def}), as the drift check looks it up. */
    public String qualname() {
        return qualname;
    }

    /** The 40-hex commit of the file version the model mirrors. */
    public String commit() {
        return commit;
    }

    /** The function's fingerprint at {@link #commit()}. */
    public String fingerprint() {
        return fingerprint;
    }

    /**
     * The merged PRs the model mirrors on top of the file version at {@link #commit()}, read from their diffs (e.g.
     * {@code #48245}), in PR order; empty when the model is that version as it stands. A checkout that has them differs
     * from the pin for their reasons, which the drift report says.
     */
    public java.util.List<String> plusPrs() {
        return plusPrs;
    }
}
