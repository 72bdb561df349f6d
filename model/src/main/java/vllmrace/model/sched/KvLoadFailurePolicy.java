package vllmrace.model.sched;

/**
 * {@code KVTransferConfig.kv_load_failure_policy} ({@code vllm/config/kv_transfer.py}; PR #26813 added it, PR #34896
 * made {@code "fail"} the default), read by {@code Scheduler.__init__} as {@code recompute_kv_load_failures}.
 * A configuration, not a fix: both are upstream behaviour.
 */
public enum KvLoadFailurePolicy {
    /** The default since #34896: a request whose load failed ends FINISHED_ERROR with one "error" output. */
    FAIL,
    /** The request keeps its valid prefix ({@code num_computed_tokens} cut back to the first invalid block) and recomputes the rest. */
    RECOMPUTE
}
