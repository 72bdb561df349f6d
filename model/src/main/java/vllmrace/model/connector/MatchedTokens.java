package vllmrace.model.connector;

/**
 * What {@code get_num_new_matched_tokens} returns: {@code (num_external_tokens, load_kv_async)}.
 * {@code numExternalTokens == null} is upstream's {@code None}: "ask again later".
 */
public record MatchedTokens(Integer numExternalTokens, boolean loadKvAsync) {
    public static final MatchedTokens NONE = new MatchedTokens(0, false);
    public static final MatchedTokens ASK_AGAIN_LATER = new MatchedTokens(null, false);

    public MatchedTokens {
        if (numExternalTokens != null && numExternalTokens < 0) {
            throw new IllegalArgumentException("num_external_tokens must be >= 0, got " + numExternalTokens);
        }
        if (loadKvAsync && (numExternalTokens == null || numExternalTokens == 0)) {
            throw new IllegalArgumentException("load_kv_async must be False when there are no external tokens");
        }
    }
}
