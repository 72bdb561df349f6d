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
 * A program of the hunt's connector world: a decode engine whose connector is a MultiConnector of one or two children
 * ({@link Child}, in config order: the first with tokens is chosen, the others get 0 tokens and, since #46865, the real
 * blocks), one or two requests (a prompt the NIXL child pulls from a remote prefill, the LMCache child has cached, or
 * both, each whole), a pool that fits each request alone, up to two busy-loop iterations of set-up, then two actors of up
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
        NIXL("NixlConnector"),
        /**
         * vLLM's in-tree LMCache MP connector, or LMCache's own with the {@code main-oot-lmcache} profile (which loads when
         * not chosen: a child that breaks the "0 tokens: do not load" contract): loads a cached prefix, saves nothing
         */
        LMCACHE("LMCacheMPConnector"),
        /** the same connector offloading every finished request ({@code request_finished} starts an async save) */
        LMCACHE_SAVING("LMCacheMPConnector (saving)"),
        /** an offloader beside it that saves every finished request too (a second saving child; it caches nothing here) */
        OFFLOADING("OffloadingConnector");

        private final String configName;

        Child(String configName) {
            this.configName = configName;
        }

        public String configName() {
            return configName;
        }

        /** Whether it loads a cached prefix (the LMCache children). */
        public boolean caches() {
            return this == LMCACHE || this == LMCACHE_SAVING;
        }
    }

    /**
     * One request: its client id, prompt blocks, {@code max_tokens}, whether the NIXL child pulls its prompt from a
     * remote prefill (and whether that prefill engine's handshake will fail), whether an LMCache-like child has its prompt
     * cached.
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
        if (children.isEmpty() || children.size() > MAX_CHILDREN || Set.copyOf(children).size() != children.size()) {
            throw new IllegalArgumentException("a MultiConnector of 1.." + MAX_CHILDREN + " distinct children, got " + children);
        }
        if (requests.isEmpty() || requests.size() > MAX_REQUESTS
                || requests.stream().map(Request::id).collect(Collectors.toSet()).size() != requests.size()) {
            throw new IllegalArgumentException("1.." + MAX_REQUESTS + " requests with distinct ids, got " + requests);
        }
        List<Child> kids = children;
        if (requests.stream().anyMatch(r -> r.remote() && !kids.contains(Child.NIXL))
                || requests.stream().anyMatch(r -> r.cached() && kids.stream().noneMatch(Child::caches))) {
            throw new IllegalArgumentException("a remote prefill needs the NIXL child, a cached prompt an LMCache-like one: "
                    + children + ", " + requests);
        }
        if (setupIterations < 0 || setupIterations > MAX_SETUP_ITERATIONS || actor1.isEmpty() || actor1.size() > MAX_OPS
                || actor2.isEmpty() || actor2.size() > MAX_OPS) {
            throw new IllegalArgumentException("0.." + MAX_SETUP_ITERATIONS + " set-up iterations and 1.." + MAX_OPS
                    + " operations per actor, got " + setupIterations + ", " + actor1 + ", " + actor2);
        }
        Set<String> ids = requests.stream().map(Request::id).collect(Collectors.toSet());
        for (ConnectorOp op : actor1) {
            if (op.kind() == Kind.ITERATION || (op.target() != null && !ids.contains(op.target()))) {
                throw new IllegalArgumentException("actor 1 cannot run " + op);
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

    /** Draws one program. */
    public static ConnectorProgram generate(Random random) {
        Objects.requireNonNull(random, "random");
        List<Child> kinds = new ArrayList<>(List.of(Child.values()));
        List<Child> children = new ArrayList<>();
        int nc = 1 + random.nextInt(MAX_CHILDREN);
        while (children.size() < nc) {
            children.add(kinds.remove(random.nextInt(kinds.size())));
        }
        boolean nixl = children.contains(Child.NIXL);
        boolean caches = children.stream().anyMatch(Child::caches);
        int n = 1 + random.nextInt(MAX_REQUESTS);
        List<Request> requests = new ArrayList<>();
        int blocks = 0;
        for (int i = 0; i < n; i++) {
            boolean remote = nixl && random.nextInt(3) != 0;
            boolean cached = caches && random.nextInt(3) != 0;
            int promptBlocks = 1 + random.nextInt(2);
            requests.add(new Request(String.valueOf((char) ('A' + i)), promptBlocks, 1 + random.nextInt(3), remote,
                    remote && random.nextInt(5) == 0, cached));
            blocks += promptBlocks;
        }
        int bs = vllmrace.races.EngineRig.BLOCK_SIZE;
        int alone = requests.stream().mapToInt(r -> (r.promptTokens(bs) + r.maxTokens() + bs - 1) / bs).max().orElseThrow();
        int pool = Math.max(alone, blocks + random.nextInt(3) - 1); // tight, exact or one spare; one request always fits
        List<ConnectorOp> a1 = new ArrayList<>();
        int ops1 = 1 + random.nextInt(MAX_OPS);
        boolean handshakes = requests.stream().anyMatch(Request::handshakeFails);
        while (a1.size() < ops1) {
            String id = requests.get(random.nextInt(n)).id();
            int k = random.nextInt(10);
            a1.add(k < 4 ? ConnectorOp.of(Kind.ABORT, id) : k < 6 ? ConnectorOp.of(Kind.LOAD_LANDS, id)
                    : k < 7 && nixl ? ConnectorOp.of(Kind.LOAD_FAILS, id)
                    : k < 8 && handshakes ? ConnectorOp.of(Kind.HANDSHAKES_FAIL) : ConnectorOp.of(Kind.TRANSFERS_COMPLETE));
        }
        List<ConnectorOp> a2 = new ArrayList<>();
        int ops2 = 1 + random.nextInt(MAX_OPS);
        for (int i = 0; i < ops2; i++) {
            a2.add(ConnectorOp.of(random.nextInt(4) == 0 ? Kind.TRANSFERS_COMPLETE : Kind.ITERATION));
        }
        return new ConnectorProgram(children, requests, pool, random.nextInt(MAX_SETUP_ITERATIONS + 1), a1, a2);
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
