package io.flinfer.runtime.generate;

import io.flinfer.runtime.sampling.SamplingParams;

/**
 * One sequence to generate: its prompt ids, how to sample, and when to stop.
 *
 * @param stopAtEos whether the tokenizer's EOS ends the sequence
 */
public record GenerationRequest(
    int[] promptIds, SamplingParams params, int maxNewTokens, boolean stopAtEos) {
  public GenerationRequest {
    if (promptIds.length == 0) {
      throw new IllegalArgumentException("a prompt needs at least one token");
    }
    if (maxNewTokens < 0) {
      throw new IllegalArgumentException("maxNewTokens must be >= 0: " + maxNewTokens);
    }
  }
}
