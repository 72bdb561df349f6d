package vllmrace.model;

import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.engine.EngineCore;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Scheduler;

/**
 * A model under test wired on one {@link EngineProcess}: the process itself, the frontend's {@link VllmInstance} on
 * it, or a race rig. What a race scenario reads of it is the process's: the one {@link StepLog} its steps are logged to
 * (the replayed interleaving), the one {@link ViolationLog} its detectors record to (what the judge reads), its
 * EngineCore, its scheduler and its KV cache.
 */
public interface Wired {
    /** The EngineCore process this model is wired on. */
    EngineProcess process();

    default StepLog stepLog() {
        return process().stepLog();
    }

    default ViolationLog violations() {
        return process().violations();
    }

    default EngineCore engineCore() {
        return process().engineCore();
    }

    default Scheduler scheduler() {
        return process().scheduler();
    }

    /** The KV-cache manager, or null without KV-cache accounting. */
    default KvCacheManager kvCacheManager() {
        return process().kvCacheManager();
    }

    /** The block pool, or null without KV-cache accounting. */
    default BlockPool blockPool() {
        return process().blockPool();
    }
}
