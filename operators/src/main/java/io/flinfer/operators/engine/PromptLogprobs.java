package io.flinfer.operators.engine;

/**
 * A request's prompt log-probabilities (vLLM's {@code prompt_logprobs}): for each prompt token from
 * the second on, its log-probability given the tokens before it under the model's own distribution,
 * and the {@code top} most likely tokens at its position, most likely first. They leave with the
 * request's first generated token.
 *
 * @param logprobs prompt token {@code i + 1}'s log-probability at {@code i}
 * @param top alternatives per position (0 to 20)
 * @param topIds their tokens, position after position
 * @param topLogprobs their log-probabilities, in the same order
 */
public record PromptLogprobs(float[] logprobs, int top, int[] topIds, float[] topLogprobs) {

  /** How many prompt tokens have a log-probability: all but the first. */
  public int count() {
    return logprobs.length;
  }
}
