package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.CompletionChunk;

/**
 * A request's chunks taken in token order: a repeat (the chunks topic is at-least-once) is dropped,
 * and after a gap (a retry that joined a request under way) nothing more is taken. Optionally
 * gathers the tokens' log-probabilities.
 */
final class InOrder {
  private final TokenLogprobs logprobs;
  private ObjectNode gathered;
  private int nextToken;
  private boolean gap;

  InOrder(TokenLogprobs logprobs) {
    this.logprobs = logprobs;
  }

  /**
   * Whether {@code c} is the next one in order (then taken), rather than a repeat or past a gap.
   */
  boolean accept(CompletionChunk c) {
    if (gap || c.getIndex() < nextToken) {
      return false;
    }
    if (c.getIndex() > nextToken) {
      gap = true;
      return false;
    }
    nextToken += c.getTokenIds().size();
    if (logprobs != null) {
      ObjectNode more = logprobs.of(c);
      if (gathered == null) {
        gathered = more;
      } else {
        TokenLogprobs.append(gathered, more);
      }
    }
    return true;
  }

  /** Tokens taken so far. */
  int tokens() {
    return gap ? -1 : nextToken;
  }

  /** The log-probabilities of the tokens taken, or null. */
  ObjectNode logprobs() {
    return gathered;
  }
}
