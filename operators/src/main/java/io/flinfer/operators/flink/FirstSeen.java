package io.flinfer.operators.flink;

/** Where and when a request id was first read: the dedupe state of that id. */
public record FirstSeen(String topic, int partition, long offset, long readAtMillis) {
  static FirstSeen of(TokenizedPrompt p) {
    return new FirstSeen(p.topic == null ? "" : p.topic, p.partition, p.offset, p.queuedAtMillis);
  }

  /** Whether {@code p} was read from this very record (a re-read, not a second request). */
  boolean isRecordOf(TokenizedPrompt p) {
    return topic.equals(p.topic == null ? "" : p.topic)
        && partition == p.partition
        && offset == p.offset;
  }
}
