package io.flinfer.operators.flink;

/**
 * One generated token (or a request's end) leaving the inference operator. {@code prompt} is set on
 * a request's first output after it entered the operator, so the detokenizer learns the request's
 * settings.
 */
public class TokenOutput {
  public String requestId;
  public int index;
  public int tokenId;
  public float logprob;

  /** null until the last output; then length, stop, abort or error. */
  public String finishType;

  public String finishDetail;
  public int cachedTokens;
  public TokenizedPrompt prompt;

  public TokenOutput() {}
}
