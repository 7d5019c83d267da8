package io.flinfer.job.gateway;

import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Back-pressure: the job's consumer group lag on the prompts topic (records written but not yet
 * read and checkpointed by the job), looked up at most once a second. Past {@code maxLag} new
 * requests are refused with 429 until the job catches up.
 */
final class LagGuard implements AutoCloseable {
  private final Admin admin;
  private final String topic;
  private final String group;
  private final long maxLag;
  private long checkedAt;
  private long lag;

  LagGuard(String bootstrapServers, String topic, String group, long maxLag) {
    this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
    this.topic = topic;
    this.group = group;
    this.maxLag = maxLag;
  }

  /** Whether the job is too far behind to accept more. */
  synchronized boolean overloaded() {
    if (maxLag <= 0) {
      return false;
    }
    long now = System.currentTimeMillis();
    if (now - checkedAt >= 1000) {
      checkedAt = now;
      try {
        lag = lag();
      } catch (Exception unknown) {
        lag = 0; // the broker will refuse the send itself if it is down
      }
    }
    return lag > maxLag;
  }

  private long lag() throws Exception {
    Map<TopicPartition, OffsetAndMetadata> committed =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    var partitions =
        admin
            .describeTopics(java.util.List.of(topic))
            .allTopicNames()
            .get()
            .get(topic)
            .partitions()
            .stream()
            .map(p -> new TopicPartition(topic, p.partition()))
            .collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest()));
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends =
        admin.listOffsets(partitions).all().get();
    long total = 0;
    for (var e : ends.entrySet()) {
      OffsetAndMetadata c = committed.get(e.getKey());
      total += e.getValue().offset() - (c == null ? 0 : c.offset());
    }
    return total;
  }

  @Override
  public void close() {
    admin.close();
  }
}
