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

  /** When the job read the record (ms since the epoch). */
  public long queuedAtMillis;

  /**
   * The record's Kafka timestamp, where the request's times start; when the record has none (or it
   * lies in the future of this clock), when the job read it.
   */
  public long recordTimestampMillis;

  public TokenizedPrompt() {}
}
