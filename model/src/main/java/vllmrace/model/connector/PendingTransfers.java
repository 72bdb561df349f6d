package vllmrace.model.connector;

import java.util.List;
import vllmrace.model.kv.TransferTarget;

/**
 * Detector only, no upstream counterpart: what a connector still owes the scheduler. The SC5 checks use it to
 * tell a delay-freed request that will be released (a transfer of its id is in flight or not yet reported) from
 * one that never will, and blocks an in-flight load still writes from leaked ones.
 */
public interface PendingTransfers {
    /** True while some transfer of {@code requestId} is in flight or completed but not yet reported. */
    boolean hasPendingTransfer(String requestId);

    /** The destinations of loads still in flight: blocks they will write are held, not leaked. */
    List<TransferTarget> inFlightLoadTargets();

    /**
     * The remote side's lease on {@code requestId}'s blocks is over ({@code kv_lease_duration}): its lease reaper stops a
     * push still in flight, so it never lands. Default: nothing (a connector with no remote side).
     */
    default void remoteLeaseExpired(String requestId) {
    }
}
