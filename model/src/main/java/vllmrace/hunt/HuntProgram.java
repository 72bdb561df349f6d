package vllmrace.hunt;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import vllmrace.hunt.HuntOp.Kind;
import vllmrace.hunt.HuntRequest.Source;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;

/**
 * A generated scenario: one to three requests added in order over a pool of {@code poolBlocks} blocks, {@code
 * setupIterations} busy-loop iterations before the actors start, the two actors' programs, the steps the async busy loop
 * keeps in flight ({@code batchQueue}: 2 at pipeline-parallel size 1, 3 with a deeper pipeline; a sync deployment runs
 * one whatever this says) and the connector's role. Immutable; drawn by {@link #generate} from a seeded {@link Random},
 * and made smaller by {@link #shrinkCandidates}.
 */
public record HuntProgram(List<HuntRequest> requests, int poolBlocks, int setupIterations, List<HuntOp> actor1, List<HuntOp> actor2,
                          int batchQueue, Role role) implements Program {
    /** The bounds of a generated program. */
    public static final int MAX_REQUESTS = 3;
    public static final int MAX_OPS = 3;
    /** The async busy loop's batch queue: {@code max_concurrent_batches}, 2, or the pipeline-parallel size. */
    public static final int MIN_BATCH_QUEUE = 2;
    public static final int MAX_BATCH_QUEUE = 3;

    /**
     * The connector's {@code kv_role}, which decides {@code requires_kv_delivery} (#50297) and whether #45357's deferred
     * frees apply (KV consumers only); each request's own save decision is its {@link HuntRequest#save()}.
     */
    public enum Role {
        /** the decode side of a P/D pair (NIXL {@code kv_consumer}): remote prefills land here */
        CONSUMER(SavePolicy.NEVER, "decode side, kv_consumer"),
        /** the prefill side (NIXL {@code kv_producer}): it hands a finished request's blocks to the decoder; loads nothing remote */
        PRODUCER(SavePolicy.ON_SUCCESS, "prefill side, kv_producer"),
        /** an offloader that loads and saves (LMCache, {@code kv_both}): counted a producer by upstream's base class */
        BOTH(SavePolicy.ALWAYS, "offloader, kv_both");

        private final SavePolicy policy;
        private final String words;

        Role(SavePolicy policy, String words) {
            this.policy = policy;
            this.words = words;
        }

        /** The connector's default save policy, from which the model's connector derives its role. */
        public SavePolicy policy() {
            return policy;
        }
    }

    /** A batch queue of 2 and a decode-side connector: the hunt's first world. */
    public HuntProgram(List<HuntRequest> requests, int poolBlocks, int setupIterations, List<HuntOp> actor1, List<HuntOp> actor2) {
        this(requests, poolBlocks, setupIterations, actor1, actor2, MIN_BATCH_QUEUE, Role.CONSUMER);
    }

    public HuntProgram {
        Objects.requireNonNull(role, "role");
        if (batchQueue < MIN_BATCH_QUEUE || batchQueue > MAX_BATCH_QUEUE) {
            throw new IllegalArgumentException("an async batch queue holds " + MIN_BATCH_QUEUE + " to " + MAX_BATCH_QUEUE
                    + " steps, not " + batchQueue);
        }
        if (role == Role.PRODUCER && requests.stream().anyMatch(r -> r.source() == Source.REMOTE)) {
            throw new IllegalArgumentException("the prefill side loads nothing from a remote prefill: " + requests);
        }
        requests = List.copyOf(requests);
        actor1 = List.copyOf(actor1);
        actor2 = List.copyOf(actor2);
        if (requests.stream().anyMatch(r -> r.source() == Source.REMOTE && r.save() != SavePolicy.NEVER)) {
            throw new IllegalArgumentException("a remote-prefill request is on the decode side: it never saves");
        }
        if (requests.isEmpty() || poolBlocks < 1 || setupIterations < 0 || actor1.isEmpty() || actor2.isEmpty()) {
            throw new IllegalArgumentException("a program needs a request, a pool, and an operation per actor");
        }
        Set<String> ids = requests.stream().map(HuntRequest::id).collect(Collectors.toSet());
        if (ids.size() != requests.size()) {
            throw new IllegalArgumentException("request ids must differ: " + requests);
        }
        for (int i = 0; i < actor1.size(); i++) {
            HuntOp op = actor1.get(i);
            if (op.target() == null ? op.kind() != Kind.TRANSFERS_COMPLETE : !ids.contains(op.target())) {
                throw new IllegalArgumentException("actor 1 cannot run " + op);
            }
            if (op.kind() == Kind.LOSE_LOAD && !actor1.subList(i + 1, actor1.size()).contains(HuntOp.of(Kind.ABORT, op.target()))) {
                throw new IllegalArgumentException("a lost push comes with the client aborting the request later: " + actor1);
            }
        }
        int bs = vllmrace.races.scheduler.EngineCoreRig.BLOCK_SIZE;
        for (HuntRequest r : requests) {
            int need = (r.promptTokens(bs) + r.maxTokens() + bs - 1) / bs;
            if (need > poolBlocks) {
                // upstream refuses to start when max_model_len does not fit the KV cache: one request always fits alone
                throw new IllegalArgumentException(r + " needs " + need + " block(s) alone; the pool has " + poolBlocks);
            }
        }
        for (HuntOp op : actor2) {
            if (op.kind() != Kind.ITERATION && op.kind() != Kind.TRANSFERS_COMPLETE) {
                throw new IllegalArgumentException("actor 2 is the busy loop and its worker, not " + op);
            }
        }
    }

    /** Draws one program. */
    public static HuntProgram generate(Random random) {
        Objects.requireNonNull(random, "random");
        int roll = random.nextInt(4);
        Role role = roll < 2 ? Role.CONSUMER : roll == 2 ? Role.PRODUCER : Role.BOTH;
        int batchQueue = random.nextInt(4) == 0 ? MAX_BATCH_QUEUE : MIN_BATCH_QUEUE;
        int n = 1 + random.nextInt(MAX_REQUESTS);
        List<HuntRequest> requests = new ArrayList<>();
        int blocks = 0;
        for (int i = 0; i < n; i++) {
            int promptBlocks = 1 + random.nextInt(2);
            int maxTokens = 1 + random.nextInt(3);
            int stop = maxTokens >= 2 && random.nextInt(3) == 0 ? 1 : 0;
            int s = random.nextInt(20);
            Source source = s < 10 || (s < 17 && role == Role.PRODUCER) ? Source.LOCAL : s < 17 ? Source.REMOTE : Source.PENDING_CHUNK;
            // a remote-prefill request is on the decode side, whose NIXL request_finished never saves; a local one may be
            // sent (prefill side) or offloaded (every finish saved)
            SavePolicy save = source == Source.REMOTE ? SavePolicy.NEVER : SavePolicy.values()[random.nextInt(SavePolicy.values().length)];
            boolean storeJob = source == Source.LOCAL && random.nextInt(4) == 0; // Mooncake's store connector
            requests.add(new HuntRequest(String.valueOf((char) ('A' + i)), promptBlocks, random.nextInt(2), maxTokens, stop, source, save,
                    storeJob));
            blocks += promptBlocks;
        }
        int bs = vllmrace.races.scheduler.EngineCoreRig.BLOCK_SIZE;
        int alone = requests.stream().mapToInt(r -> (r.promptTokens(bs) + r.maxTokens() + bs - 1) / bs).max().orElseThrow();
        int pool = Math.max(alone, blocks + random.nextInt(3) - 1); // tight, exact or one spare; one request always fits
        List<HuntOp> a1 = new ArrayList<>();
        int ops1 = 1 + random.nextInt(MAX_OPS);
        while (a1.size() < ops1) {
            HuntRequest r = requests.get(random.nextInt(n));
            int k = random.nextInt(10);
            if (k < 4) {
                a1.add(HuntOp.of(Kind.ABORT, r.id()));
            } else if (k < 6) {
                a1.add(HuntOp.of(Kind.READD, r.id()));
            } else if (k < 7 && r.source() == Source.PENDING_CHUNK) {
                a1.add(HuntOp.of(Kind.CHUNK_WRITTEN, r.id()));
            } else if (k < 7 && r.storeJob()) {
                a1.add(HuntOp.of(Kind.STORE_READ, r.id()));
            } else if (k < 8 && r.source() == Source.REMOTE) {
                a1.add(HuntOp.of(Kind.LOSE_LOAD, r.id())); // a lost push comes with the client giving up on it
                a1.add(HuntOp.of(Kind.ABORT, r.id()));
            } else {
                a1.add(HuntOp.of(Kind.TRANSFERS_COMPLETE));
            }
        }
        List<HuntOp> a2 = new ArrayList<>();
        int ops2 = 1 + random.nextInt(MAX_OPS);
        for (int i = 0; i < ops2; i++) {
            a2.add(HuntOp.of(random.nextInt(4) == 0 ? Kind.TRANSFERS_COMPLETE : Kind.ITERATION));
        }
        return new HuntProgram(requests, pool, random.nextInt(3), a1, a2, batchQueue, role);
    }

    @Override
    public vllmrace.races.RaceScenario scenario(vllmrace.model.fix.FixSet fixes, vllmrace.model.deploy.Configuration configuration) {
        return new HuntScenario(this, fixes, configuration);
    }

    /** Operations plus requests plus set-up iterations, plus one each for a deeper queue and a role other than the decode side. */
    @Override
    public int size() {
        return actor1.size() + actor2.size() + requests.size() + setupIterations + (batchQueue - MIN_BATCH_QUEUE)
                + (role == Role.CONSUMER ? 0 : 1);
    }

    /**
     * Programs one step smaller: one operation fewer in either actor, one request fewer (with the operations on it), one
     * set-up iteration fewer. Only valid programs.
     */
    @Override
    public List<HuntProgram> shrinkCandidates() {
        List<java.util.function.Supplier<HuntProgram>> out = new ArrayList<>();
        for (int i = 0; i < actor1.size() && actor1.size() > 1; i++) {
            List<HuntOp> a = new ArrayList<>(actor1);
            a.remove(i);
            out.add(() -> new HuntProgram(requests, poolBlocks, setupIterations, a, actor2, batchQueue, role));
        }
        for (int i = 0; i < actor2.size() && actor2.size() > 1; i++) {
            List<HuntOp> a = new ArrayList<>(actor2);
            a.remove(i);
            out.add(() -> new HuntProgram(requests, poolBlocks, setupIterations, actor1, a, batchQueue, role));
        }
        for (HuntRequest r : requests) {
            if (requests.size() == 1) {
                break;
            }
            List<HuntRequest> rs = new ArrayList<>(requests);
            rs.remove(r);
            List<HuntOp> a = actor1.stream().filter(op -> !r.id().equals(op.target())).toList();
            if (!a.isEmpty()) {
                out.add(() -> new HuntProgram(rs, Math.max(1, poolBlocks - r.promptBlocks()), setupIterations, a, actor2, batchQueue, role));
                out.add(() -> new HuntProgram(rs, poolBlocks, setupIterations, a, actor2, batchQueue, role));
            }
        }
        if (setupIterations > 0) {
            out.add(() -> new HuntProgram(requests, poolBlocks, setupIterations - 1, actor1, actor2, batchQueue, role));
        }
        if (poolBlocks > 1) {
            out.add(() -> new HuntProgram(requests, poolBlocks - 1, setupIterations, actor1, actor2, batchQueue, role));
        }
        if (batchQueue > MIN_BATCH_QUEUE) {
            out.add(() -> new HuntProgram(requests, poolBlocks, setupIterations, actor1, actor2, batchQueue - 1, role));
        }
        if (role != Role.CONSUMER) {
            out.add(() -> new HuntProgram(requests, poolBlocks, setupIterations, actor1, actor2, batchQueue, Role.CONSUMER));
        }
        return Program.valid(out);
    }

    @Override
    public String toString() {
        return "requests " + requests + ", pool " + poolBlocks + " block(s), " + setupIterations + " set-up iteration(s)"
                + (batchQueue == MIN_BATCH_QUEUE ? "" : ", batch queue " + batchQueue)
                + (role == Role.CONSUMER ? "" : ", connector " + role.words) + "; actor 1 " + actor1 + "; actor 2 " + actor2;
    }
}
