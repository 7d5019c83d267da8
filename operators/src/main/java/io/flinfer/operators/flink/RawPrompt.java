package io.flinfer.operators.flink;

/** A record's bytes as read from the prompts topic, with where they came from. */
public class RawPrompt {
  public byte[] value;
  public String topic;
  public int partition;
  public long offset;

  public RawPrompt() {}

  public RawPrompt(byte[] value, String topic, int partition, long offset) {
    this.value = value;
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
  }
}
