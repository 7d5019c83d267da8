package io.flinfer.job.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The in-process broker takes transactional writes that a read-committed consumer then sees. */
class EmbeddedKafkaTest {
  @TempDir Path dir;

  @Test
  @Timeout(120)
  void transactionalRecordsReachAReadCommittedConsumer() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(2, "prompts");
      try (KafkaProducer<String, String> producer =
          new KafkaProducer<>(
              Map.of(
                  ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                  kafka.bootstrapServers(),
                  ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                  "test-tx"),
              new StringSerializer(),
              new StringSerializer())) {
        producer.initTransactions();
        producer.beginTransaction();
        for (int i = 0; i < 3; i++) {
          producer.send(new ProducerRecord<>("prompts", "k" + i, "v" + i));
        }
        producer.commitTransaction();
      }
      List<String> seen = new ArrayList<>();
      try (KafkaConsumer<String, String> consumer =
          new KafkaConsumer<>(
              Map.of(
                  ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                  ConsumerConfig.GROUP_ID_CONFIG, "g",
                  ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                  ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
              new StringDeserializer(),
              new StringDeserializer())) {
        consumer.subscribe(List.of("prompts"));
        long end = System.currentTimeMillis() + 60_000;
        while (seen.size() < 3 && System.currentTimeMillis() < end) {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
            seen.add(r.value());
          }
        }
      }
      assertThat(seen).containsExactlyInAnyOrder("v0", "v1", "v2");
    }
  }
}
