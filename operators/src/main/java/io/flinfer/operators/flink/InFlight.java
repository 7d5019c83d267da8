package io.flinfer.operators.flink;

/**
 * The checkpointed state of one request inside the inference operator: the request and the tokens
 * generated so far. Its K/V is not state: a restored request is prefilled again with its prompt and
 * these tokens, and generation, being deterministic, continues identically.
 */
public class InFlight {
  public TokenizedPrompt prompt;
  public int[] generated;

  public InFlight() {}

  public InFlight(TokenizedPrompt prompt, int[] generated) {
    this.prompt = prompt;
    this.generated = generated;
  }
}
