package io.flinfer.operators.flink;

/**
 * Generated tokens of one request leaving the inference operator, consecutive from {@code index}
 * (possibly none, on a request's end), and its finish on the last. {@code prompt} is set on a
 * request's first output after it entered the operator, so the detokenizer learns the request's
 * settings.
 */
public class TokenOutput {
  public String requestId;

  /** The first token's index; -1 when the output carries no token. */
  public int index = -1;

  public int[] tokenIds = new int[0];
  public float[] logprobs = new float[0];

  /**
   * The most likely tokens at each token's position, when the request asked for them: the same
   * number for every token, token after token (most likely first); else empty.
   */
  public int[] topIds = new int[0];

  public float[] topLogprobs = new float[0];

  /**
   * On the output holding token 0 of a request that asked for them: its prompt's log-probabilities
   * (prompt token {@code i + 1}'s at {@code i}), and the most likely tokens at each position, the
   * same number for each, position after position; else empty.
   */
  public float[] promptLogprobs = new float[0];

  public int[] promptRanks = new int[0];

  public int[] promptTopIds = new int[0];
  public float[] promptTopLogprobs = new float[0];

  /** null until the last output; then length, stop, abort or error. */
  public String finishType;

  public String finishDetail;
  public int cachedTokens;
  public TokenizedPrompt prompt;

  /**
   * On the output holding token 0: from the record's timestamp to the request's first admission to
   * a prefill batch, and from its entry into the engine to this token; else -1.
   */
  public long queuedMillis = -1;

  public long engineFirstTokenMillis = -1;

  public TokenOutput() {}
}
