package vllmrace.model;

import vllmrace.model.asyncio.StepLog;
import vllmrace.model.detect.ViolationLog;

/**
 * A wired model under test as a race scenario sees it: the one {@link StepLog} its steps are logged to (the replayed
 * interleaving) and the one {@link ViolationLog} its detectors record to (what the judge reads).
 */
public interface Observable {
    StepLog stepLog();

    ViolationLog violations();
}
