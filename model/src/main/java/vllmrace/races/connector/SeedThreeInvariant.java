package vllmrace.races.connector;

import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;

/**
 * The four invariants of seed 003's fix-direction matrix (docs/lifecycle.md §3(b)), read from a run's
 * {@link ViolationLog} after its arbiter ran the system to quiescence.
 */
public enum SeedThreeInvariant {
    /** No upstream assert fired on the busy loop (EngineCore stays alive). */
    ENGINE_ALIVE,
    /** SC4: no transfer wrote a block its request no longer owns (freed, or reallocated). */
    NO_WRITE_INTO_FREED_BLOCK,
    /** SC5: no block and no delay-freed request left unreleased at quiescence. */
    NO_LEAK,
    /** CN1: each request's transfer completion reached the scheduler exactly once (one recv, one terminal event). */
    EXACTLY_ONE_TERMINAL_EVENT;

    public String label() {
        return switch (this) {
            case ENGINE_ALIVE -> "engine alive";
            case NO_WRITE_INTO_FREED_BLOCK -> "no write into a freed or reallocated block";
            case NO_LEAK -> "no leak at quiescence";
            case EXACTLY_ONE_TERMINAL_EVENT -> "exactly one terminal transfer event per request";
        };
    }

    /** True when the run's log shows this invariant held. */
    public boolean holds(ViolationLog log) {
        return switch (this) {
            case ENGINE_ALIVE -> !log.engineDead();
            case NO_WRITE_INTO_FREED_BLOCK -> !log.has(ViolationKind.WRITE_INTO_FREED_BLOCK);
            case NO_LEAK -> !log.has(ViolationKind.BLOCK_LEAK) && !log.has(ViolationKind.DELAY_FREED_NEVER_RELEASED);
            case EXACTLY_ONE_TERMINAL_EVENT -> !log.has(ViolationKind.DUPLICATE_TRANSFER_EVENT)
                    && !log.has(ViolationKind.LATE_TRANSFER_REPORT);
        };
    }
}
