package vllmrace.model.connector.multi;

import java.util.List;
import java.util.Objects;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.KvRole;
import vllmrace.model.connector.MatchedTokens;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;

/**
 * What the model's children that load nothing share (the NIXL producer sides, the offloader's stores): {@code kv_both},
 * no external tokens to offer, arguments checked where upstream would fail on them, no load to report.
 *
 * <p>Thread-safe: every method is synchronized on the connector. Caller errors throw before any state changes.
 */
public abstract class NoLoadChild implements ChildConnector {
    private final String name;
    protected final KvCacheManager kvCacheManager;

    protected NoLoadChild(String name, KvCacheManager kvCacheManager) {
        this.name = Objects.requireNonNull(name, "name");
        this.kvCacheManager = Objects.requireNonNull(kvCacheManager, "kvCacheManager");
    }

    @Override
    public String name() {
        return name;
    }

    /** {@code kv_both}, as P/D and offloading deployments configure these children: each requires KV delivery. */
    @Override
    public KvRole kvRole() {
        return KvRole.KV_BOTH;
    }

    /** Nothing to load: no external tokens. */
    @Override
    public synchronized MatchedTokens getNumNewMatchedTokens(Request request, int numComputedTokens) {
        Objects.requireNonNull(request, "request");
        return MatchedTokens.NONE;
    }

    /** Nothing to start; the arguments are checked. */
    @Override
    public synchronized void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(blockIds, "blockIds");
        if (numExternalTokens < 0) {
            throw new IllegalArgumentException("num_external_tokens must be >= 0, got " + numExternalTokens);
        }
    }

    @Override
    public synchronized void updateConnectorOutput(KvConnectorOutput kvConnectorOutput) {
        Objects.requireNonNull(kvConnectorOutput, "kvConnectorOutput");
    }

    /** A child that loads nothing has no load to report. */
    @Override
    public synchronized boolean hasUnreportedLoad(String requestId) {
        return false;
    }
}
