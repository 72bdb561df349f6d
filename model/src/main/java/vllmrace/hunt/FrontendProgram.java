package vllmrace.hunt;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.SamplingParams;
import vllmrace.races.RaceScenario;

/**
 * A program of the hunt's frontend world: the client's request X ({@code n} parallel samples, {@code maxTokens}, a stop
 * string after {@code stopAfter} tokens or none), added and run for {@code setupRounds} rounds (one busy-loop iteration
 * and one output-handler pass each), then two actors: the client's calls ({@link FrontendOp#client()}) and the engine's
 * side (busy-loop iterations and output-handler passes). Immutable; drawn by {@link #generate}, made smaller by {@link
 * #shrinkCandidates}.
 */
public record FrontendProgram(int n, int maxTokens, int stopAfter, int setupRounds, List<FrontendOp> client,
                              List<FrontendOp> engine) implements Program {
    public static final int MAX_N = 2;
    public static final int MAX_TOKENS = 3;
    public static final int MAX_SETUP_ROUNDS = 2;
    public static final int MAX_CLIENT_OPS = 2;
    public static final int MAX_ENGINE_OPS = 3;

    public FrontendProgram {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(engine, "engine");
        client = List.copyOf(client);
        engine = List.copyOf(engine);
        if (n < 1 || n > MAX_N || maxTokens < 1 || maxTokens > MAX_TOKENS || stopAfter < 0 || stopAfter > maxTokens
                || setupRounds < 0 || setupRounds > MAX_SETUP_ROUNDS) {
            throw new IllegalArgumentException("a frontend program has n 1.." + MAX_N + ", max_tokens 1.." + MAX_TOKENS
                    + ", a stop string within max_tokens (0: none) and 0.." + MAX_SETUP_ROUNDS + " set-up rounds; got n " + n
                    + ", max_tokens " + maxTokens + ", stop after " + stopAfter + ", " + setupRounds + " round(s)");
        }
        if (client.isEmpty() || client.size() > MAX_CLIENT_OPS || engine.isEmpty() || engine.size() > MAX_ENGINE_OPS) {
            throw new IllegalArgumentException("actor 1 has 1.." + MAX_CLIENT_OPS + " operations and actor 2 1.." + MAX_ENGINE_OPS
                    + ", got " + client + " and " + engine);
        }
        if (client.stream().anyMatch(op -> !op.client()) || engine.stream().anyMatch(FrontendOp::client)) {
            throw new IllegalArgumentException("actor 1 is the client (add_request, abort), actor 2 EngineCore and the output "
                    + "handler; got " + client + " and " + engine);
        }
    }

    /** Draws one program. */
    public static FrontendProgram generate(Random random) {
        Objects.requireNonNull(random, "random");
        int n = 1 + random.nextInt(MAX_N);
        int maxTokens = 1 + random.nextInt(MAX_TOKENS);
        int stopAfter = random.nextInt(2) == 0 ? 0 : 1 + random.nextInt(maxTokens);
        List<FrontendOp> client = new ArrayList<>();
        int ops1 = 1 + random.nextInt(MAX_CLIENT_OPS);
        FrontendOp[] clientOps = {FrontendOp.READD, FrontendOp.ABORT, FrontendOp.CANCEL};
        for (int i = 0; i < ops1; i++) {
            client.add(clientOps[random.nextInt(clientOps.length)]);
        }
        List<FrontendOp> engine = new ArrayList<>();
        int ops2 = 1 + random.nextInt(MAX_ENGINE_OPS);
        for (int i = 0; i < ops2; i++) {
            engine.add(random.nextBoolean() ? FrontendOp.OUTPUT_HANDLER : FrontendOp.ENGINE_STEP);
        }
        return new FrontendProgram(n, maxTokens, stopAfter, random.nextInt(MAX_SETUP_ROUNDS + 1), client, engine);
    }

    public SamplingParams params() {
        return new SamplingParams(n, maxTokens, stopAfter);
    }

    @Override
    public RaceScenario scenario(FixSet fixes, Configuration configuration) {
        return new FrontendHuntScenario(this, fixes, configuration);
    }

    /** Operations plus set-up rounds, plus one for n > 1, one for a stop string and one per token past the first. */
    @Override
    public int size() {
        return client.size() + engine.size() + setupRounds + (n - 1) + (stopAfter > 0 ? 1 : 0) + (maxTokens - 1);
    }

    @Override
    public List<FrontendProgram> shrinkCandidates() {
        List<FrontendProgram> out = new ArrayList<>();
        for (int i = 0; i < client.size() && client.size() > 1; i++) {
            List<FrontendOp> a = new ArrayList<>(client);
            a.remove(i);
            out.add(new FrontendProgram(n, maxTokens, stopAfter, setupRounds, a, engine));
        }
        for (int i = 0; i < engine.size() && engine.size() > 1; i++) {
            List<FrontendOp> a = new ArrayList<>(engine);
            a.remove(i);
            out.add(new FrontendProgram(n, maxTokens, stopAfter, setupRounds, client, a));
        }
        if (setupRounds > 0) {
            out.add(new FrontendProgram(n, maxTokens, stopAfter, setupRounds - 1, client, engine));
        }
        if (n > 1) {
            out.add(new FrontendProgram(n - 1, maxTokens, stopAfter, setupRounds, client, engine));
        }
        if (stopAfter > 0) {
            out.add(new FrontendProgram(n, maxTokens, 0, setupRounds, client, engine));
        }
        if (maxTokens > Math.max(1, stopAfter)) {
            out.add(new FrontendProgram(n, maxTokens - 1, stopAfter, setupRounds, client, engine));
        }
        return out;
    }

    @Override
    public String toString() {
        return "frontend: X(n " + n + ", max_tokens " + maxTokens + (stopAfter > 0 ? ", stop string at " + stopAfter : "") + "), "
                + setupRounds + " set-up round(s); actor 1 " + client + "; actor 2 " + engine;
    }
}
