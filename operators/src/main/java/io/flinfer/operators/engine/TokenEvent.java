package io.flinfer.operators.engine;

/**
 * One generated token of a request, or its end. A request that ends without a token (an error
 * before prefill, an abort while waiting) gets one event with index -1 and token -1.
 *
 * @param finish null until the request's last event
 */
public record TokenEvent(
    String requestId, int index, int tokenId, float logprob, FinishReason finish) {
  public boolean isLast() {
    return finish != null;
  }
}
