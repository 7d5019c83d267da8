package io.flinfer.job.pipeline;

import java.io.Serializable;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;

/**
 * A range of the prompts topic that an offline replay serves: where each partition starts
 * (inclusive) and where it stops (exclusive). Each end is written as
 *
 * <ul>
 *   <li>{@code earliest} (a start) or {@code latest} (a stop: the end of each partition when the
 *       replay starts, so records produced during it are not read);
 *   <li>a time, as epoch milliseconds or an ISO-8601 instant ({@code 2026-11-22T08:00:00Z}): the
 *       first record at or after it;
 *   <li>partition offsets, {@code 0:1200,1:1187}: partitions not named start at their beginning and
 *       are not read at all when the stop names others.
 * </ul>
 */
public record PromptRange(
    OffsetsInitializer start, OffsetsInitializer stop, String from, String until)
    implements Serializable {

  /** The range from {@code from} to {@code until} of {@code topic}. */
  public static PromptRange parse(String topic, String from, String until) {
    if ("latest".equals(from) || "earliest".equals(until)) {
      throw new IllegalArgumentException(
          "a replay starts at earliest, a time or offsets, and stops at latest, a time or offsets");
    }
    Long fromTime = time(from);
    Long untilTime = time(until);
    Map<TopicPartition, Long> starts =
        fromTime == null && !"earliest".equals(from) ? offsets(topic, from) : null;
    Map<TopicPartition, Long> stops =
        untilTime == null && !"latest".equals(until) ? offsets(topic, until) : null;
    if (fromTime != null && untilTime != null && fromTime > untilTime) {
      throw new IllegalArgumentException(
          "the range starts after it ends: " + from + " is later than " + until);
    }
    if (starts != null && stops != null) {
      stops.forEach(
          (tp, stop) -> {
            Long start = starts.get(tp);
            if (start != null && start > stop) {
              throw new IllegalArgumentException(
                  "partition "
                      + tp.partition()
                      + " starts after it stops: "
                      + start
                      + " > "
                      + stop);
            }
          });
    }
    return new PromptRange(
        "earliest".equals(from) ? OffsetsInitializer.earliest() : end(fromTime, starts),
        "latest".equals(until) ? OffsetsInitializer.latest() : end(untilTime, stops),
        from,
        until);
  }

  /** The end at a time, else at partition offsets. */
  private static OffsetsInitializer end(Long time, Map<TopicPartition, Long> offsets) {
    if (time != null) {
      return OffsetsInitializer.timestamp(time);
    }
    // Unnamed partitions resolve to their beginning: read from there as a start, not at all as a
    // stop. The replay commits no offsets, so no committed offset comes first.
    return OffsetsInitializer.offsets(offsets, OffsetResetStrategy.EARLIEST);
  }

  /** Epoch milliseconds of a time spec; null when {@code spec} is not a time. */
  private static Long time(String spec) {
    if (spec.matches("\\d+")) {
      return Long.parseLong(spec);
    }
    if (spec.contains("T")) {
      try {
        return Instant.parse(spec).toEpochMilli();
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException("not an ISO-8601 instant: " + spec, e);
      }
    }
    return null;
  }

  private static Map<TopicPartition, Long> offsets(String topic, String spec) {
    Map<TopicPartition, Long> offsets = new HashMap<>();
    for (String part : spec.split(",")) {
      String[] po = part.trim().split(":");
      if (po.length != 2 || !po[0].matches("\\d+") || !po[1].matches("\\d+")) {
        throw new IllegalArgumentException(
            "not earliest, latest, a time or partition:offset pairs: " + spec);
      }
      TopicPartition tp = new TopicPartition(topic, Integer.parseInt(po[0]));
      if (offsets.put(tp, Long.parseLong(po[1])) != null) {
        throw new IllegalArgumentException("partition " + po[0] + " named twice: " + spec);
      }
    }
    return offsets;
  }

  @Override
  public String toString() {
    return "[" + from + ", " + until + ")";
  }
}
