package io.flinfer.job.pipeline;

import static io.flinfer.job.pipeline.PipelineTestSupport.assertNothingMore;
import static io.flinfer.job.pipeline.PipelineTestSupport.awaitCompletions;
import static io.flinfer.job.pipeline.PipelineTestSupport.bytes;
import static io.flinfer.job.pipeline.PipelineTestSupport.committedConsumer;
import static io.flinfer.job.pipeline.PipelineTestSupport.engineAlone;
import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.Completion;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.job.cli.FlinferCommand;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code flinfer replay} on a real in-process broker, in a MiniCluster of its own: it serves
 * exactly the records of the range asked for (by offsets, or by time), every one to its end, and
 * then the job ends by itself; completions are committed (read committed sees each once, equal to
 * the engine alone's), and a bad record in the range is a dead letter.
 */
class ReplayITCase {
  private static final long T0 = Instant.parse("2026-11-22T08:00:00Z").toEpochMilli();

  @TempDir Path dir;

  /** Ten records at offsets 0-9, a minute apart; offset 6 holds bytes that are no request. */
  private static List<PromptRequest> produceTen(EmbeddedKafka kafka) throws Exception {
    List<PromptRequest> requests = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      for (int offset = 0; offset < 10; offset++) {
        byte[] value;
        if (offset == 6) {
          value = "not a request".getBytes(StandardCharsets.UTF_8);
        } else {
          PromptRequest r =
              PromptRequest.newBuilder()
                  .setRequestId("rec-" + offset)
                  .setPrompt(offset % 2 == 0 ? "Once upon a time" : "Lily and Ben")
                  .setMaxNewTokens(20 + 8 * offset)
                  .setSampling(
                      SamplingOptions.newBuilder()
                          .setTemperature(0.7f)
                          .setSeed((long) offset)
                          .build())
                  .build();
          requests.add(r);
          value = bytes(r.toByteBuffer());
        }
        producer.send(new ProducerRecord<>("prompts", 0, T0 + offset * 60_000L, null, value)).get();
      }
    }
    return requests;
  }

  private static int replay(EmbeddedKafka kafka, String from, String until) {
    Path models = SharedFiles.stories260kDir();
    return FlinferCommand.commandLine()
        .execute(
            "replay",
            "--bootstrap-servers",
            kafka.bootstrapServers(),
            "--prompts-topic",
            "prompts",
            "--model",
            models.resolve("stories260K.bin").toString(),
            "--from",
            from,
            "--until",
            until,
            "--parallelism",
            "1",
            "--checkpoint-interval-ms",
            "200");
  }

  @Test
  @Timeout(180)
  void anOffsetRangeIsServedToItsEndAndTheJobEnds() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(1, "prompts", "flinfer.replay.completions", "flinfer.replay.dead-letters");
      List<PromptRequest> all = produceTen(kafka);

      // Returns only once the bounded job has finished.
      assertThat(replay(kafka, "0:4", "0:9")).isZero();

      List<PromptRequest> inRange =
          all.stream().filter(r -> offset(r) >= 4 && offset(r) < 9).toList();
      try (KafkaConsumer<byte[], byte[]> completions =
              committedConsumer(kafka, "flinfer.replay.completions");
          KafkaConsumer<byte[], byte[]> deadLetters =
              committedConsumer(kafka, "flinfer.replay.dead-letters")) {
        Map<String, Completion> got =
            awaitCompletions(completions, inRange.size(), Duration.ofSeconds(10));
        // The job has ended and committed: nothing else is on its way.
        assertNothingMore(completions, Duration.ofSeconds(1));
        assertThat(got.keySet())
            .containsExactlyInAnyOrderElementsOf(
                inRange.stream().map(PromptRequest::getRequestId).toList());
        Map<String, String> expected = engineAlone(inRange);
        assertThat(
                got.values().stream()
                    .collect(Collectors.toMap(c -> c.getRequestId(), c -> c.getText())))
            .isEqualTo(expected);
        assertThat(got.values())
            .allSatisfy(
                c -> {
                  assertThat(c.getProvenance().getSourceOffset())
                      .isEqualTo(offset(c.getRequestId()));
                  assertThat(c.getFinishReason().toString()).isEqualTo("length");
                });

        List<DeadLetter> letters = new ArrayList<>();
        long end = System.currentTimeMillis() + 10_000;
        while (letters.isEmpty() && System.currentTimeMillis() < end) {
          for (ConsumerRecord<byte[], byte[]> r : deadLetters.poll(Duration.ofMillis(200))) {
            letters.add(DeadLetter.fromByteBuffer(ByteBuffer.wrap(r.value())));
          }
        }
        assertThat(letters)
            .singleElement()
            .satisfies(d -> assertThat(d.getSourceOffset()).isEqualTo(6));
      }
    }
  }

  @Test
  @Timeout(180)
  void aTimeRangeServesTheRecordsProducedInIt() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(1, "prompts", "flinfer.replay.completions", "flinfer.replay.dead-letters");
      List<PromptRequest> all = produceTen(kafka);

      // From 08:01:30 (ISO) until 08:04:00 (epoch ms): the records at minutes 2 and 3.
      String from = Instant.ofEpochMilli(T0 + 90_000).toString();
      assertThat(replay(kafka, from, Long.toString(T0 + 4 * 60_000L))).isZero();

      try (KafkaConsumer<byte[], byte[]> completions =
          committedConsumer(kafka, "flinfer.replay.completions")) {
        Map<String, Completion> got = awaitCompletions(completions, 2, Duration.ofSeconds(10));
        assertNothingMore(completions, Duration.ofSeconds(1));
        assertThat(got.keySet()).containsExactlyInAnyOrder("rec-2", "rec-3");
        assertThat(
                got.values().stream()
                    .collect(Collectors.toMap(c -> c.getRequestId(), c -> c.getText())))
            .isEqualTo(engineAlone(all.subList(2, 4)));
      }
    }
  }

  private static long offset(PromptRequest r) {
    return offset(r.getRequestId());
  }

  private static long offset(CharSequence requestId) {
    return Long.parseLong(requestId.toString().substring("rec-".length()));
  }
}
