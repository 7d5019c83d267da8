package io.flinfer.operators.engine;

import java.io.Serializable;

/**
 * Speculative decoding by n-gram lookup (vLLM's prompt lookup, and SGLang's {@code NGRAM} cache of
 * finished answers, with linear drafts): each decode step proposes up to {@code numDraftTokens}
 * tokens that followed an earlier occurrence of the request's last {@code minMatchWindow} to {@code
 * maxMatchWindow} tokens (the longest that occurred), in its own text or else in the finished
 * answers of its namespace, and one forward step verifies them. A draft is accepted token by token
 * while the request's own sampling picks it, so the output is the one decoding without drafts
 * gives, bit for bit: what changes is how many steps it takes. Steps with more than {@code
 * disableByBatchSize} running requests do not speculate (vLLM's option), since a large batch is
 * compute-bound and a rejected draft is then a cost, not a free read of the weights.
 */
public record SpeculativeConfig(
    int numDraftTokens, int minMatchWindow, int maxMatchWindow, int disableByBatchSize)
    implements Serializable {

  /** The most draft tokens a step may verify per request. */
  public static final int MAX_DRAFT_TOKENS = 16;

  public SpeculativeConfig {
    if (numDraftTokens < 1 || numDraftTokens > MAX_DRAFT_TOKENS) {
      throw new IllegalArgumentException(
          "speculative_num_draft_tokens must be 1 to " + MAX_DRAFT_TOKENS);
    }
    if (minMatchWindow < 1 || maxMatchWindow < minMatchWindow) {
      throw new IllegalArgumentException("need 1 <= min match window <= max match window");
    }
    if (maxMatchWindow > 64) {
      throw new IllegalArgumentException("the max match window is at most 64 tokens");
    }
    if (disableByBatchSize < 1) {
      throw new IllegalArgumentException("speculative disable-by-batch-size must be >= 1");
    }
  }

  /** {@code numDraftTokens} drafts from windows of 1 to 4 tokens, up to 8 running requests. */
  public static SpeculativeConfig ngram(int numDraftTokens) {
    return new SpeculativeConfig(numDraftTokens, 1, 4, 8);
  }
}
