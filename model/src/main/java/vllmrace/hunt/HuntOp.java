package vllmrace.hunt;

import java.util.Objects;

/**
 * One operation of an actor's program. Actor 1 is the client and the environment (aborts, re-adds, a connector's
 * background writes, a remote side that never pushes); actor 2 is the busy loop and its worker. Every operation is total:
 * where it does not apply (no load in flight to lose, no chunk being written) it does nothing, so a generated program is
 * never a modelling error by itself.
 *
 * @param kind   what it does
 * @param target the request's id, or null for the busy loop's operations
 */
public record HuntOp(Kind kind, String target) {

    /** The operations. */
    public enum Kind {
        /** client: ABORT(target) reaches the input thread */
        ABORT(true),
        /** client: a new ADD under target's id (the client resubmits it) */
        READD(true),
        /** connector background thread: target's pending chunk is written */
        CHUNK_WRITTEN(true),
        /** environment: target's in-flight async load will never complete (the remote side crashed) */
        LOSE_LOAD(true),
        /** store thread: target's store job reads its blocks and PUTs them under target's key */
        STORE_READ(true),
        /** worker: every in-flight KV transfer completes */
        TRANSFERS_COMPLETE(false),
        /** busy loop: one iteration (input queue, schedule, the oldest step's output); three steps */
        ITERATION(false);

        private final boolean targeted;

        Kind(boolean targeted) {
            this.targeted = targeted;
        }

        public boolean targeted() {
            return targeted;
        }
    }

    public HuntOp {
        Objects.requireNonNull(kind, "kind");
        if (kind.targeted() != (target != null)) {
            throw new IllegalArgumentException(kind + (kind.targeted() ? " needs a request" : " takes no request"));
        }
    }

    public static HuntOp of(Kind kind) {
        return new HuntOp(kind, null);
    }

    public static HuntOp of(Kind kind, String target) {
        return new HuntOp(kind, target);
    }

    @Override
    public String toString() {
        return target == null ? kind.name().toLowerCase() : kind.name().toLowerCase() + "(" + target + ")";
    }
}
