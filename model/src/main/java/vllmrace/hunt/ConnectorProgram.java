package vllmrace.hunt;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import vllmrace.hunt.ConnectorOp.Kind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.RaceScenario;

/**
 * A program of the hunt's connector world: an engine whose connector is a MultiConnector of one or two children
 * ({@link Child}, in config order: the first with tokens is chosen, the others get 0 tokens and, since #46865, the real
 * blocks; NIXL in one of its roles at most: the decode side pulling or pushed to, the prefill side pulled from or
 * pushing, the bidirectional decode side), one or two requests (a prompt whose KV comes from a remote prefill, one the
 * LMCache child has cached, or both, each whole; on a NIXL prefill side every finished request is held for its reader),
 * a pool that fits each request alone, up to two busy-loop iterations of set-up, then two actors of up
 * to three operations ({@link ConnectorOp}). Immutable; drawn by {@link #generate}, made smaller by
 * {@link #shrinkCandidates}.
 */
public record ConnectorProgram(List<Child> children, List<Request> requests, int poolBlocks, int setupIterations,
                               List<ConnectorOp> actor1, List<ConnectorOp> actor2) implements Program {
    public static final int MAX_CHILDREN = 2;
    public static final int MAX_REQUESTS = 2;
    public static final int MAX_OPS = 3;
    public static final int MAX_SETUP_ITERATIONS = 2;

    /** A child of the MultiConnector. */
    public enum Child {
        /** NIXL's decode side ({@code NixlConnector}, kv_both): pulls a remote prefill's blocks, saves nothing here */
        NIXL("NixlConnector", 0),
        /**
         * vLLM's in-tree LMCache MP connector, or LMCache's own with the {@code main-oot-lmcache} profile (which loads when
         * not chosen: a child that breaks the "0 tokens: do not load" contract): loads a cached prefix, saves nothing
         */
        LMCACHE("LMCacheMPConnector", 0),
        /** the same connector offloading every finished request ({@code request_finished} starts an async save) */
        LMCACHE_SAVING("LMCacheMPConnector (saving)", 0),
        /** an offloader beside it that saves every finished request too (a second saving child; it caches nothing here) */
        OFFLOADING("OffloadingConnector", 0),
        /**
         * NIXL's prefill side in pull mode (nixl/pull_scheduler.py, pull_worker.py): every request it finishes is leased
         * ({@code kv_lease_duration} 2 polls, LeaseExpiredReadAfterFree's) and its blocks handed to a decode side, whose
         * READ and heartbeats are actor 1's
         */
        NIXL_PULL_PREFILL("NixlConnector (prefill, pull)", 2),
        /**
         * NIXL's prefill side in push mode (push_scheduler.py, push_worker.py): every request it finishes is leased
         * ({@code kv_lease_duration} 3 polls, LeaseReaperHeadOfLine's) until its WRITEs into the decode side's two ranks are
         * reported; posting them, each WRITE completing or failing and D's heartbeats are actor 1's
         */
        NIXL_PUSH_PREFILL("NixlConnector (prefill, push)", 3),
        /**
         * NIXL's decode side with bidirectional transfer (#47021): every request it finishes holds its blocks for the
         * prefill side's turn-2 READ ({@code decoder_kv_blocks_ttl} 2 polls; no heartbeats extend it)
         */
        NIXL_BIDIRECTIONAL("NixlConnector (decode, bidirectional)", 2),
        /** NIXL's decode side in push mode: a remote prefill's two ranks each WRITE its share and notify */
        NIXL_PUSH_DECODE("NixlConnector (decode, push)", 0);

        private final String configName;
        private final int leasePolls;

        Child(String configName, int leasePolls) {
            this.configName = configName;
            this.leasePolls = leasePolls;
        }

        public String configName() {
            return configName;
        }

        /** Whether it loads a cached prefix (the LMCache children). */
        public boolean caches() {
            return this == LMCACHE || this == LMCACHE_SAVING;
        }

        /** NIXL in one of its roles: upstream runs one NixlConnector, so a MultiConnector holds at most one of these. */
        public boolean nixl() {
            return this == NIXL || this == NIXL_PULL_PREFILL || this == NIXL_PUSH_PREFILL || this == NIXL_BIDIRECTIONAL
                    || this == NIXL_PUSH_DECODE;
        }

        /** Whether a request's prompt KV can come from a remote prefill through it (pulled, or pushed). */
        public boolean receivesRemotePrefill() {
            return this == NIXL || this == NIXL_PUSH_DECODE;
        }

        /** The lease (or TTL) in worker polls on which it holds a finished request's blocks for a remote reader; 0: none. */
        public int leasePolls() {
            return leasePolls;
        }

        /** Whether the remote side's heartbeats extend its leases (not the bidirectional TTL: "heartbeats are effectively disabled"). */
        public boolean heartbeats() {
            return this == NIXL_PULL_PREFILL || this == NIXL_PUSH_PREFILL;
        }
    }

    /**
     * One request: its client id, prompt blocks, {@code max_tokens}, whether its prompt's KV comes from a remote prefill
     * (pulled by the NIXL child, whose handshake with that prefill engine may be set to fail, or pushed to the NIXL push
     * decode child by two prefill ranks), whether an LMCache-like child has its prompt cached. On an engine whose NIXL
     * child holds finished requests for a remote reader (a prefill side, or a bidirectional decode side) every request
     * that finishes is held.
     */
    public record Request(String id, int promptBlocks, int maxTokens, boolean remote, boolean handshakeFails, boolean cached) {
        public Request {
            Objects.requireNonNull(id, "id");
            if (promptBlocks < 1 || promptBlocks > 2 || maxTokens < 1 || maxTokens > 3 || (handshakeFails && !remote)) {
                throw new IllegalArgumentException("not a request: " + id + " prompt blocks " + promptBlocks + " (1..2), max_tokens "
                        + maxTokens + " (1..3), a failing handshake only for a remote prefill");
            }
        }

        public int promptTokens(int blockSize) {
            return promptBlocks * blockSize;
        }

        @Override
        public String toString() {
            return id + "(prompt " + promptBlocks + " block(s), max_tokens " + maxTokens + (remote ? ", remote prefill" : "")
                    + (handshakeFails ? " whose handshake fails" : "") + (cached ? ", cached" : "") + ")";
        }
    }

    public ConnectorProgram {
        children = List.copyOf(children);
        requests = List.copyOf(requests);
        actor1 = List.copyOf(actor1);
        actor2 = List.copyOf(actor2);
        if (children.isEmpty() || children.size() > MAX_CHILDREN || Set.copyOf(children).size() != children.size()
                || children.stream().filter(Child::nixl).count() > 1) {
            throw new IllegalArgumentException("a MultiConnector of 1.." + MAX_CHILDREN + " distinct children, NIXL in one role "
                    + "at most, got " + children);
        }
        if (requests.isEmpty() || requests.size() > MAX_REQUESTS
                || requests.stream().map(Request::id).collect(Collectors.toSet()).size() != requests.size()) {
            throw new IllegalArgumentException("1.." + MAX_REQUESTS + " requests with distinct ids, got " + requests);
        }
        List<Child> kids = children;
        if (requests.stream().anyMatch(r -> r.remote() && kids.stream().noneMatch(Child::receivesRemotePrefill))
                || requests.stream().anyMatch(r -> r.handshakeFails() && !kids.contains(Child.NIXL))
                || requests.stream().anyMatch(r -> r.cached() && kids.stream().noneMatch(Child::caches))
                || requests.stream().anyMatch(r -> r.remote() && r.cached() && kids.contains(Child.NIXL_PUSH_DECODE))) {
            throw new IllegalArgumentException("a remote prefill needs a NIXL decode child (a failing handshake the pulling "
                    + "one), a cached prompt an LMCache-like one, and a pushed prompt is not also cached: " + children + ", "
                    + requests);
        }
        if (setupIterations < 0 || setupIterations > MAX_SETUP_ITERATIONS || actor1.isEmpty() || actor1.size() > MAX_OPS
                || actor2.isEmpty() || actor2.size() > MAX_OPS) {
            throw new IllegalArgumentException("0.." + MAX_SETUP_ITERATIONS + " set-up iterations and 1.." + MAX_OPS
                    + " operations per actor, got " + setupIterations + ", " + actor1 + ", " + actor2);
        }
        Set<String> ids = requests.stream().map(Request::id).collect(Collectors.toSet());
        for (ConnectorOp op : actor1) {
            if (!op.kind().actor1() && op.kind() != Kind.TRANSFERS_COMPLETE || (op.target() != null && !ids.contains(op.target()))
                    || !op.kind().runsWith(kids)) {
                throw new IllegalArgumentException("actor 1 cannot run " + op + " with " + children);
            }
        }
        for (ConnectorOp op : actor2) {
            if (op.kind() != Kind.ITERATION && op.kind() != Kind.TRANSFERS_COMPLETE) {
                throw new IllegalArgumentException("actor 2 is the busy loop and its worker, not " + op);
            }
        }
        int bs = vllmrace.races.EngineRig.BLOCK_SIZE;
        for (Request r : requests) {
            int need = (r.promptTokens(bs) + r.maxTokens() + bs - 1) / bs;
            if (need > poolBlocks) {
                throw new IllegalArgumentException(r + " needs " + need + " block(s) alone; the pool has " + poolBlocks);
            }
        }
    }

    /**
     * Draws one program. The NIXL slot of the children is NIXL's pulling decode side half the time, else one of its other
     * roles (prefill side pulled from or pushing, bidirectional decode side, pushed-to decode side); programs with the
     * pulling decode side draw their operations as they always have.
     */
    public static ConnectorProgram generate(Random random) {
        Objects.requireNonNull(random, "random");
        List<Child> roles = List.of(Child.NIXL_PULL_PREFILL, Child.NIXL_PUSH_PREFILL, Child.NIXL_BIDIRECTIONAL, Child.NIXL_PUSH_DECODE);
        Child nixlRole = random.nextBoolean() ? Child.NIXL : roles.get(random.nextInt(roles.size()));
        List<Child> kinds = new ArrayList<>(List.of(nixlRole, Child.LMCACHE, Child.LMCACHE_SAVING, Child.OFFLOADING));
        List<Child> children = new ArrayList<>();
        int nc = 1 + random.nextInt(MAX_CHILDREN);
        while (children.size() < nc) {
            children.add(kinds.remove(random.nextInt(kinds.size())));
        }
        boolean nixl = children.contains(Child.NIXL);
        boolean receives = children.stream().anyMatch(Child::receivesRemotePrefill);
        boolean caches = children.stream().anyMatch(Child::caches);
        int n = 1 + random.nextInt(MAX_REQUESTS);
        List<Request> requests = new ArrayList<>();
        int blocks = 0;
        for (int i = 0; i < n; i++) {
            boolean remote = receives && random.nextInt(3) != 0;
            // a pushed prompt is not also cached: the push decode side not chosen keeps do_remote_prefill (push_scheduler.py
            // update_state_after_alloc: "if num_external_tokens <= 0: return") for a re-entry and an empty recv at
            // request_finished, which its model does not run
            boolean cached = caches && !(remote && children.contains(Child.NIXL_PUSH_DECODE)) && random.nextInt(3) != 0;
            int promptBlocks = 1 + random.nextInt(2);
            requests.add(new Request(String.valueOf((char) ('A' + i)), promptBlocks, 1 + random.nextInt(3), remote,
                    nixl && remote && random.nextInt(5) == 0, cached));
            blocks += promptBlocks;
        }
        int bs = vllmrace.races.EngineRig.BLOCK_SIZE;
        int alone = requests.stream().mapToInt(r -> (r.promptTokens(bs) + r.maxTokens() + bs - 1) / bs).max().orElseThrow();
        int pool = Math.max(alone, blocks + random.nextInt(3) - 1); // tight, exact or one spare; one request always fits
        List<ConnectorOp> a1 = new ArrayList<>();
        int ops1 = 1 + random.nextInt(MAX_OPS);
        boolean handshakes = requests.stream().anyMatch(Request::handshakeFails);
        List<Kind> roleOps = List.of(Kind.values()).stream()
                .filter(k -> k.targeted() && k != Kind.ABORT && k != Kind.LOAD_LANDS && k != Kind.LOAD_FAILS && k.runsWith(children))
                .toList();
        while (a1.size() < ops1) {
            String id = requests.get(random.nextInt(n)).id();
            int k = random.nextInt(10);
            if (roleOps.isEmpty()) {
                a1.add(k < 4 ? ConnectorOp.of(Kind.ABORT, id) : k < 6 ? ConnectorOp.of(Kind.LOAD_LANDS, id)
                        : k < 7 && nixl ? ConnectorOp.of(Kind.LOAD_FAILS, id)
                        : k < 8 && handshakes ? ConnectorOp.of(Kind.HANDSHAKES_FAIL) : ConnectorOp.of(Kind.TRANSFERS_COMPLETE));
            } else {
                a1.add(k < 3 ? ConnectorOp.of(Kind.ABORT, id) : k < 4 && caches ? ConnectorOp.of(Kind.LOAD_LANDS, id)
                        : k < 9 ? roleOp(roleOps, a1, id, random) : ConnectorOp.of(Kind.TRANSFERS_COMPLETE));
            }
        }
        List<ConnectorOp> a2 = new ArrayList<>();
        int ops2 = 1 + random.nextInt(MAX_OPS);
        for (int i = 0; i < ops2; i++) {
            a2.add(ConnectorOp.of(random.nextInt(4) == 0 ? Kind.TRANSFERS_COMPLETE : Kind.ITERATION));
        }
        return new ConnectorProgram(children, requests, pool, random.nextInt(MAX_SETUP_ITERATIONS + 1), a1, a2);
    }

    /** One of the NIXL role's own operations on {@code id}; a push's WRITEs are posted before any of them ends. */
    private static ConnectorOp roleOp(List<Kind> roleOps, List<ConnectorOp> before, String id, Random random) {
        Kind kind = roleOps.get(random.nextInt(roleOps.size()));
        if ((kind == Kind.WRITE_COMPLETES || kind == Kind.WRITE_FAILS) && !before.contains(ConnectorOp.of(Kind.WRITES_POSTED, id))) {
            kind = Kind.WRITES_POSTED;
        } else if (kind == Kind.WRITES_POSTED && before.contains(ConnectorOp.of(Kind.WRITES_POSTED, id))) {
            kind = random.nextInt(3) == 0 ? Kind.WRITE_FAILS : Kind.WRITE_COMPLETES;
        }
        return ConnectorOp.of(kind, id);
    }

    @Override
    public RaceScenario scenario(FixSet fixes, Configuration configuration) {
        return new ConnectorHuntScenario(this, fixes, configuration);
    }

    /** Operations plus requests plus set-up iterations, plus one per child beyond the first and per load beyond one. */
    @Override
    public int size() {
        long loads = requests.stream().mapToLong(r -> (r.remote() ? 1 : 0) + (r.cached() ? 1 : 0) + (r.handshakeFails() ? 1 : 0)).sum();
        return actor1.size() + actor2.size() + requests.size() + setupIterations + (children.size() - 1) + (int) Math.max(0, loads - 1);
    }

    @Override
    public List<ConnectorProgram> shrinkCandidates() {
        List<Supplier<ConnectorProgram>> out = new ArrayList<>();
        for (int i = 0; i < actor1.size() && actor1.size() > 1; i++) {
            List<ConnectorOp> a = new ArrayList<>(actor1);
            a.remove(i);
            out.add(() -> new ConnectorProgram(children, requests, poolBlocks, setupIterations, a, actor2));
        }
        for (int i = 0; i < actor2.size() && actor2.size() > 1; i++) {
            List<ConnectorOp> a = new ArrayList<>(actor2);
            a.remove(i);
            out.add(() -> new ConnectorProgram(children, requests, poolBlocks, setupIterations, actor1, a));
        }
        for (Request r : requests) {
            List<Request> rs = new ArrayList<>(requests);
            rs.remove(r);
            List<ConnectorOp> a = actor1.stream().filter(op -> !r.id().equals(op.target())).toList();
            out.add(() -> new ConnectorProgram(children, rs, Math.max(1, poolBlocks - r.promptBlocks()), setupIterations, a, actor2));
            out.add(() -> new ConnectorProgram(children, rs, poolBlocks, setupIterations, a, actor2));
            for (Request smaller : List.of(new Request(r.id(), r.promptBlocks(), r.maxTokens(), r.remote(), false, r.cached()),
                    new Request(r.id(), r.promptBlocks(), r.maxTokens(), false, false, r.cached()),
                    new Request(r.id(), r.promptBlocks(), r.maxTokens(), r.remote(), r.handshakeFails(), false),
                    new Request(r.id(), 1, r.maxTokens(), r.remote(), r.handshakeFails(), r.cached()),
                    new Request(r.id(), r.promptBlocks(), 1, r.remote(), r.handshakeFails(), r.cached()))) {
                if (!smaller.equals(r)) {
                    List<Request> rr = requests.stream().map(x -> x == r ? smaller : x).toList();
                    out.add(() -> new ConnectorProgram(children, rr, poolBlocks, setupIterations, actor1, actor2));
                }
            }
        }
        for (Child c : children) {
            List<Child> cs = new ArrayList<>(children);
            cs.remove(c);
            out.add(() -> new ConnectorProgram(cs, requests, poolBlocks, setupIterations, actor1, actor2));
        }
        if (setupIterations > 0) {
            out.add(() -> new ConnectorProgram(children, requests, poolBlocks, setupIterations - 1, actor1, actor2));
        }
        if (poolBlocks > 1) {
            out.add(() -> new ConnectorProgram(children, requests, poolBlocks - 1, setupIterations, actor1, actor2));
        }
        return Program.valid(out);
    }

    @Override
    public String toString() {
        return "connectors: MultiConnector" + children.stream().map(Child::configName).toList() + ", requests " + requests + ", pool "
                + poolBlocks + " block(s), " + setupIterations + " set-up iteration(s); actor 1 " + actor1 + "; actor 2 " + actor2;
    }
}
