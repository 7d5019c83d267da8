package io.flinfer.operators.flink;

/**
 * A record as read from the prompts topic: its bytes, its key (only as much as a dead letter would
 * echo), the headers the job carries, its Kafka timestamp, and where it came from.
 */
public class RawPrompt {
  public byte[] value;
  public byte[] key;
  public String topic;
  public int partition;
  public long offset;

  /** The carried headers the record has ({@link CarriedHeaders}), as text, or null for none. */
  public java.util.Map<String, String> headers;

  /**
   * Why the record's carried headers cannot travel with it (the record is then refused), or null.
   */
  public String headerProblem;

  /** The refusal's reason with {@link #headerProblem}. */
  public io.flinfer.operators.request.Rejection headerRejection;

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
