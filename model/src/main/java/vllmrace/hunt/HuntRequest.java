package vllmrace.hunt;

import java.util.Objects;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;

/**
 * One request of a generated scenario: its prompt (in blocks of {@link vllmrace.races.scheduler.EngineCoreRig#BLOCK_SIZE}
 * tokens, minus {@code shortBy}), its length, where its prompt's KV comes from, and what the connector does with its
 * blocks when it finishes.
 *
 * @param id          the client's id (one capital letter)
 * @param promptBlocks prompt blocks, 1 or more
 * @param shortBy     tokens short of full blocks (0 or 1)
 * @param maxTokens   {@code max_tokens}, 1 or more
 * @param stopTokenAt the output token that is a stop token (0: none)
 * @param source      where its prompt's KV comes from
 * @param save        the connector's {@code request_finished} decision for it
 * @param storeJob    a store connector (Mooncake's) emits a store job for it when it is first scheduled, which a store
 *                    thread reads later ({@link HuntOp.Kind#STORE_READ})
 */
public record HuntRequest(String id, int promptBlocks, int shortBy, int maxTokens, int stopTokenAt, Source source, SavePolicy save,
                          boolean storeJob) {

    /** Where a request's prompt KV comes from. */
    public enum Source {
        /** computed locally */
        LOCAL,
        /** a remote prefill instance: an async load into its blocks ({@code do_remote_prefill}) */
        REMOTE,
        /** an offloading connector still writing a chunk of it: the lookup answers "ask again later" until it is written */
        PENDING_CHUNK
    }

    public HuntRequest {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(save, "save");
        if (storeJob && source == Source.REMOTE) {
            throw new IllegalArgumentException(id + ": a store job stores KV computed here, not a remote prefill's");
        }
        if (promptBlocks < 1 || shortBy < 0 || shortBy > 1 || maxTokens < 1 || stopTokenAt < 0 || stopTokenAt > maxTokens) {
            throw new IllegalArgumentException("not a request: " + id + " promptBlocks=" + promptBlocks + " shortBy=" + shortBy
                    + " maxTokens=" + maxTokens + " stopTokenAt=" + stopTokenAt);
        }
    }

    /** A request no store job reads. */
    public HuntRequest(String id, int promptBlocks, int shortBy, int maxTokens, int stopTokenAt, Source source, SavePolicy save) {
        this(id, promptBlocks, shortBy, maxTokens, stopTokenAt, source, save, false);
    }

    public int promptTokens(int blockSize) {
        return promptBlocks * blockSize - shortBy;
    }

    @Override
    public String toString() {
        return id + "(prompt " + promptBlocks + " block(s)" + (shortBy > 0 ? " less " + shortBy : "") + ", max_tokens " + maxTokens
                + (stopTokenAt > 0 ? ", stop token at " + stopTokenAt : "") + ", " + source.name().toLowerCase().replace('_', ' ')
                + ", save " + save.name().toLowerCase().replace('_', ' ') + (storeJob ? ", store job" : "") + ")";
    }
}
