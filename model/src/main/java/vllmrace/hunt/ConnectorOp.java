package vllmrace.hunt;

import java.util.Collection;
import java.util.Objects;
import java.util.Set;
import vllmrace.hunt.ConnectorProgram.Child;

/**
 * One operation of a {@link ConnectorProgram}'s actors. Actor 1 is the client, the connectors' workers and the remote
 * side (an abort, a load landing, a NIXL pull failing, a NIXL handshake failing, a remote READ of held blocks, a
 * heartbeat, a push's WRITEs, every transfer completing); actor 2 is the busy loop and its worker.
 * Every operation is total: where it does not apply (no load of that request in flight, no blocks of it held) it does
 * nothing, so a generated program is never a modelling error by itself.
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
        LOAD_FAILS(true, true, Child.NIXL),
        /** NIXL handshake thread: the handshakes set up to fail fail ({@code _handle_failed_transfer(id, None)}) */
        HANDSHAKES_FAIL(true, false),
        /**
         * remote side: its NIXL READ of target's held blocks completes (the decode side's pull from this prefill side, or
         * the prefill side's turn-2 READ from this bidirectional decode side) and its notification joins the queue
         */
        REMOTE_READ(true, true, Child.NIXL_PULL_PREFILL, Child.NIXL_BIDIRECTIONAL),
        /** decode side: its heartbeat {@code "HB:" + target} reaches this prefill side's notification queue */
        HEARTBEAT(true, true, Child.NIXL_PULL_PREFILL, Child.NIXL_PUSH_PREFILL),
        /** writer thread: D's PUSH_REG matched; one WRITE of target's held blocks posted per D rank (two) */
        WRITES_POSTED(true, true, Child.NIXL_PUSH_PREFILL),
        /** NIC: the push of target's first WRITE handle in progress is DONE (it read the source blocks) */
        WRITE_COMPLETES(true, true, Child.NIXL_PUSH_PREFILL),
        /** NIC: the push of target's first WRITE handle in progress is ERR */
        WRITE_FAILS(true, true, Child.NIXL_PUSH_PREFILL),
        /** a prefill rank: its WRITE of target lands in this decode side's blocks and it notifies */
        PUSH_LANDS(true, true, Child.NIXL_PUSH_DECODE),
        /** a prefill rank fails to post its WRITE of target: it logs, and sends nothing unless #50754's PUSH_FAIL */
        PUSH_POST_FAILS(true, true, Child.NIXL_PUSH_DECODE),
        /** worker: every in-flight transfer of every child completes */
        TRANSFERS_COMPLETE(false, false),
        /** busy loop: one iteration (input queue, schedule, the oldest step's output and get_finished) */
        ITERATION(false, false);

        private final boolean actor1;
        private final boolean targeted;
        private final Set<Child> children;

        Kind(boolean actor1, boolean targeted, Child... children) {
            this.actor1 = actor1;
            this.targeted = targeted;
            this.children = Set.of(children);
        }

        /** Whether only actor 1 runs it ({@link #TRANSFERS_COMPLETE} either actor; {@link #ITERATION} actor 2 only). */
        public boolean actor1() {
            return actor1;
        }

        public boolean targeted() {
            return targeted;
        }

        /** Whether a MultiConnector of {@code present} has a child it acts on (the NIXL roles' operations need theirs). */
        public boolean runsWith(Collection<Child> present) {
            return children.isEmpty() || present.stream().anyMatch(children::contains);
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
