package io.flinfer.operators.flink;

import io.flinfer.avro.PromptRequest;

/** A valid request: the producer's record, its prompt tokens, routing key, seed and source. */
public class TokenizedPrompt {
  public PromptRequest request;
  public int[] promptIds;
  public String routingKey;
  public long seed;
  public String topic;
  public int partition;
  public long offset;
  public long queuedAtMillis;

  public TokenizedPrompt() {}
}
