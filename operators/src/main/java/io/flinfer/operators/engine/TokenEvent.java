package io.flinfer.operators.engine;

/**
 * One generated token of a request, or its end. A request that ends without a token (an error
 * before prefill, an abort while waiting) gets one event with index -1 and token -1.
 *
 * @param finish null until the request's last event
 * @param cachedTokens on the last event: prompt tokens served from the prefix cache at the
 *     request's first admission
 * @param queuedMillis on the first token's event: how long the request waited between its
 *     submission and its first admission to a prefill batch
 * @param topIds the most likely tokens at this token's position, most likely first, when the
 *     request asked for them (its top_logprobs); else empty
 * @param topLogprobs their log-probabilities
 * @param promptLogprobs on the first token's event of a request that asked for them: its prompt's
 *     log-probabilities; else null
 */
public record TokenEvent(
    String requestId,
    int index,
    int tokenId,
    float logprob,
    FinishReason finish,
    int cachedTokens,
    long queuedMillis,
    int[] topIds,
    float[] topLogprobs,
    PromptLogprobs promptLogprobs) {
  static final int[] NO_IDS = new int[0];
  static final float[] NO_LOGPROBS = new float[0];

  /** The end of a request that ends without a token. */
  public static TokenEvent end(String requestId, FinishReason finish, int cachedTokens) {
    return new TokenEvent(
        requestId, -1, -1, 0f, finish, cachedTokens, 0, NO_IDS, NO_LOGPROBS, null);
  }

  public boolean isLast() {
    return finish != null;
  }
}
