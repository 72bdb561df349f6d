package vllmrace.hunt;

import java.util.Objects;

/**
 * One operation of a {@link ConnectorProgram}'s actors. Actor 1 is the client and the connectors' workers (an abort, a
 * load landing, a NIXL pull failing, a NIXL handshake failing, every transfer completing); actor 2 is the busy loop and
 * its worker.
 * Every operation is total: where it does not apply (no load of that request in flight) it does nothing, so a generated
 * program is never a modelling error by itself.
 *
 * @param kind   what it does
 * @param target the request's client id, or null for the operations on no request
 */
public record ConnectorOp(Kind kind, String target) {

    /** The operations. */
    public enum Kind {
        /** client: ABORT(target) reaches the input thread */
        ABORT(true, true),
        /** worker: every child's load of target in flight lands in its blocks (a NIXL READ, an LMCache retrieve) */
        LOAD_LANDS(true, true),
        /**
         * worker: the NIXL pull of target fails (every handle in progress ERR), its blocks invalid. The LMCache MP connector
         * reports no load error (lmcache_mp_connector.py@474b0b8c get_block_ids_with_load_errors returns set(), "TODO: add
         * error tracking"), so no LMCache retrieve fails visibly: a world that failed one would show what upstream cannot.
         */
        LOAD_FAILS(true, true),
        /** NIXL handshake thread: the handshakes set up to fail fail ({@code _handle_failed_transfer(id, None)}) */
        HANDSHAKES_FAIL(true, false),
        /** worker: every in-flight transfer of every child completes */
        TRANSFERS_COMPLETE(false, false),
        /** busy loop: one iteration (input queue, schedule, the oldest step's output and get_finished) */
        ITERATION(false, false);

        private final boolean actor1;
        private final boolean targeted;

        Kind(boolean actor1, boolean targeted) {
            this.actor1 = actor1;
            this.targeted = targeted;
        }

        /** Whether only actor 1 runs it ({@link #TRANSFERS_COMPLETE} either actor; {@link #ITERATION} actor 2 only). */
        public boolean actor1() {
            return actor1;
        }

        public boolean targeted() {
            return targeted;
        }
    }

    public ConnectorOp {
        Objects.requireNonNull(kind, "kind");
        if (kind.targeted() != (target != null)) {
            throw new IllegalArgumentException(kind + (kind.targeted() ? " needs a request" : " takes no request"));
        }
    }

    public static ConnectorOp of(Kind kind) {
        return new ConnectorOp(kind, null);
    }

    public static ConnectorOp of(Kind kind, String target) {
        return new ConnectorOp(kind, target);
    }

    @Override
    public String toString() {
        return target == null ? kind.name().toLowerCase() : kind.name().toLowerCase() + "(" + target + ")";
    }
}
