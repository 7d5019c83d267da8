package io.flinfer.operators.flink;

/**
 * A record as read from the prompts topic: its bytes, its key (only as much as a dead letter would
 * echo), its Kafka timestamp, and where it came from.
 */
public class RawPrompt {
  public byte[] value;
  public byte[] key;
  public String topic;
  public int partition;
  public long offset;

  /** The record's Kafka timestamp (ms since the epoch), or -1 when it has none. */
  public long timestampMillis = -1;

  public RawPrompt() {}

  public RawPrompt(byte[] value, String topic, int partition, long offset) {
    this.value = value;
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
  }
}
