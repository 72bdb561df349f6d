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
 * setupIterations} busy-loop iterations before the actors start, and the two actors' programs. Immutable; drawn by
 * {@link #generate} from a seeded {@link Random}, and made smaller by {@link #shrinkCandidates}.
 */
public record HuntProgram(List<HuntRequest> requests, int poolBlocks, int setupIterations, List<HuntOp> actor1, List<HuntOp> actor2) {
    /** The bounds of a generated program. */
    public static final int MAX_REQUESTS = 3;
    public static final int MAX_OPS = 3;

    public HuntProgram {
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
        int n = 1 + random.nextInt(MAX_REQUESTS);
        List<HuntRequest> requests = new ArrayList<>();
        int blocks = 0;
        for (int i = 0; i < n; i++) {
            int promptBlocks = 1 + random.nextInt(2);
            int maxTokens = 1 + random.nextInt(3);
            int stop = maxTokens >= 2 && random.nextInt(3) == 0 ? 1 : 0;
            int s = random.nextInt(20);
            Source source = s < 10 ? Source.LOCAL : s < 17 ? Source.REMOTE : Source.PENDING_CHUNK;
            // a remote-prefill request is on the decode side, whose NIXL request_finished never saves; a local one may be
            // sent (prefill side) or offloaded (every finish saved)
            SavePolicy save = source == Source.REMOTE ? SavePolicy.NEVER : SavePolicy.values()[random.nextInt(SavePolicy.values().length)];
            requests.add(new HuntRequest(String.valueOf((char) ('A' + i)), promptBlocks, random.nextInt(2), maxTokens, stop, source, save));
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
        return new HuntProgram(requests, pool, random.nextInt(3), a1, a2);
    }

    /** Operations plus requests plus set-up iterations: what shrinking minimises. */
    public int size() {
        return actor1.size() + actor2.size() + requests.size() + setupIterations;
    }

    /**
     * Programs one step smaller: one operation fewer in either actor, one request fewer (with the operations on it), one
     * set-up iteration fewer. Only valid programs.
     */
    public List<HuntProgram> shrinkCandidates() {
        List<java.util.function.Supplier<HuntProgram>> out = new ArrayList<>();
        for (int i = 0; i < actor1.size() && actor1.size() > 1; i++) {
            List<HuntOp> a = new ArrayList<>(actor1);
            a.remove(i);
            out.add(() -> new HuntProgram(requests, poolBlocks, setupIterations, a, actor2));
        }
        for (int i = 0; i < actor2.size() && actor2.size() > 1; i++) {
            List<HuntOp> a = new ArrayList<>(actor2);
            a.remove(i);
            out.add(() -> new HuntProgram(requests, poolBlocks, setupIterations, actor1, a));
        }
        for (HuntRequest r : requests) {
            if (requests.size() == 1) {
                break;
            }
            List<HuntRequest> rs = new ArrayList<>(requests);
            rs.remove(r);
            List<HuntOp> a = actor1.stream().filter(op -> !r.id().equals(op.target())).toList();
            if (!a.isEmpty()) {
                out.add(() -> new HuntProgram(rs, Math.max(1, poolBlocks - r.promptBlocks()), setupIterations, a, actor2));
                out.add(() -> new HuntProgram(rs, poolBlocks, setupIterations, a, actor2));
            }
        }
        if (setupIterations > 0) {
            out.add(() -> new HuntProgram(requests, poolBlocks, setupIterations - 1, actor1, actor2));
        }
        if (poolBlocks > 1) {
            out.add(() -> new HuntProgram(requests, poolBlocks - 1, setupIterations, actor1, actor2));
        }
        List<HuntProgram> valid = new ArrayList<>();
        for (java.util.function.Supplier<HuntProgram> candidate : out) {
            try {
                valid.add(candidate.get());
            } catch (IllegalArgumentException e) {
                // not a program (a lost push without its abort, a pool too small for a request): not a candidate
            }
        }
        return valid;
    }

    @Override
    public String toString() {
        return "requests " + requests + ", pool " + poolBlocks + " block(s), " + setupIterations + " set-up iteration(s); actor 1 "
                + actor1 + "; actor 2 " + actor2;
    }
}
