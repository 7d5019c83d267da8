package io.flinfer.runtime.grammar;

/**
 * Whether a reasoning model's output may think (between {@code <think>} and {@code </think>})
 * before the shape it must have, as vLLM and SGLang let it with a reasoning parser: the constraint
 * then holds from the end of the thought.
 */
public enum Thinking {
  /** The shape holds from the first token: no thought (the prompt closed one, or none is known). */
  NONE,
  /** The output may open a thought with {@code <think>} first, or start the shape at once. */
  MAY_OPEN,
  /** The prompt opened the thought: the output thinks until {@code </think>}. */
  OPENED
}
