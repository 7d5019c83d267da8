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
 */
public record TokenEvent(
    String requestId,
    int index,
    int tokenId,
    float logprob,
    FinishReason finish,
    int cachedTokens,
    long queuedMillis) {

  public TokenEvent(String requestId, int index, int tokenId, float logprob, FinishReason finish) {
    this(requestId, index, tokenId, logprob, finish, 0, 0);
  }

  public boolean isLast() {
    return finish != null;
  }
}
