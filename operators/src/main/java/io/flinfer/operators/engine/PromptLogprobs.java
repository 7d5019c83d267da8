package io.flinfer.operators.engine;

/**
 * A request's prompt log-probabilities (vLLM's {@code prompt_logprobs}): for each prompt token from
 * the second on, its log-probability given the tokens before it under the model's own distribution,
 * and the {@code top} most likely tokens at its position, most likely first. They leave with the
 * request's first generated token.
 *
 * @param start the first position read (0 unless the request asked to start later)
 * @param logprobs prompt token {@code start + i + 1}'s log-probability, read at position {@code
 *     start + i}
 * @param ranks each token's rank at its position: 1 plus the number of tokens more likely there
 * @param top alternatives per position (0 to 20)
 * @param topIds their tokens, position after position
 * @param topLogprobs their log-probabilities, in the same order
 */
public record PromptLogprobs(
    int start, float[] logprobs, int[] ranks, int top, int[] topIds, float[] topLogprobs) {

  /** How many prompt tokens have a log-probability: all after position {@code start}. */
  public int count() {
    return logprobs.length;
  }
}
