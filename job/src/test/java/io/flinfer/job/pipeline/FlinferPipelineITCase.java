package io.flinfer.job.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole job on a real in-process Kafka broker and a Flink MiniCluster: prompts in, one
 * completion per valid prompt out (read committed), equal to what the engine alone produces;
 * streamed chunks that concatenate to the completion; a dead letter for each bad record.
 */
class FlinferPipelineITCase {
  @TempDir Path dir;

  private static final String[] PROMPTS = {
    "Once upon a time", "Lily and Ben", "The cat sat on the mat. It", "Tom had a red ball"
  };

  static PromptRequest request(int i) {
    PromptRequest.Builder b =
        PromptRequest.newBuilder()
            .setRequestId("req-" + i)
            .setPrompt(PROMPTS[i])
            .setMaxNewTokens(24 + 4 * i);
    if (i % 2 == 1) {
      b.setSampling(SamplingOptions.newBuilder().setTemperature(0.8f).setTopP(0.9f).build());
    } else {
      b.setSampling(SamplingOptions.newBuilder().setTemperature(0f).build());
    }
    if (i == 0) {
      b.setStream(true);
    }
    if (i == 2) {
      b.setStop(List.of("."));
    }
    return b.build();
  }

  @Test
  @Timeout(240)
  void promptsInCompletionsOutDeadLettersAside() throws Exception {
    Path modelDir = SharedFiles.stories260kDir();
    ModelSource model =
        new ModelSource(
            modelDir.resolve("stories260K.bin").toString(),
            modelDir.resolve("tok512.bin").toString());
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(2, "prompts", "completions", "chunks", "dead-letters");
      try (KafkaProducer<byte[], byte[]> producer =
          new KafkaProducer<>(
              Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
              new ByteArraySerializer(),
              new ByteArraySerializer())) {
        for (int i = 0; i < PROMPTS.length; i++) {
          producer.send(new ProducerRecord<>("prompts", bytes(request(i).toByteBuffer())));
        }
        producer.send(new ProducerRecord<>("prompts", "not avro".getBytes()));
        producer.send(
            new ProducerRecord<>(
                "prompts",
                bytes(
                    PromptRequest.newBuilder()
                        .setRequestId("bad")
                        .setPrompt("")
                        .build()
                        .toByteBuffer())));
      }
      PipelineSettings settings = PipelineTestSupport.settings(kafka, model, 500).build();
      Configuration conf = new Configuration();
      conf.setString("restart-strategy.type", "none");
      conf.setString("pipeline.generic-types", "false");
      StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
      FlinferPipeline.build(env, settings);
      JobClient job = env.executeAsync("flinfer-it");
      var result = job.getJobExecutionResult();
      try {
        Map<String, Completion> completions = new TreeMap<>();
        List<DeadLetter> deadLetters = new ArrayList<>();
        Map<String, List<CompletionChunk>> chunks = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(kafka)) {
          consumer.subscribe(List.of("completions", "dead-letters", "chunks"));
          long end = System.currentTimeMillis() + 180_000;
          while ((completions.size() < PROMPTS.length || deadLetters.size() < 2)
              && System.currentTimeMillis() < end) {
            if (result.isDone()) {
              result.get(); // surfaces the job's failure
              throw new AssertionError("the job ended before every result arrived");
            }
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
              ByteBuffer v = ByteBuffer.wrap(r.value());
              switch (r.topic()) {
                case "completions" -> {
                  Completion c = Completion.fromByteBuffer(v);
                  assertThat(completions.put(c.getRequestId(), c))
                      .as("duplicate completion")
                      .isNull();
                }
                case "dead-letters" -> deadLetters.add(DeadLetter.fromByteBuffer(v));
                default -> {
                  CompletionChunk ch = CompletionChunk.fromByteBuffer(v);
                  chunks.computeIfAbsent(ch.getRequestId(), k -> new ArrayList<>()).add(ch);
                }
              }
            }
          }
        }
        assertThat(completions).hasSize(PROMPTS.length);
        List<PromptRequest> sent = new ArrayList<>();
        for (int i = 0; i < PROMPTS.length; i++) {
          sent.add(request(i));
        }
        Map<String, String> expected = PipelineTestSupport.engineAlone(sent);
        for (int i = 0; i < PROMPTS.length; i++) {
          assertThat(completions.get("req-" + i).getText())
              .as("req-%d", i)
              .isEqualTo(expected.get("req-" + i));
        }
        // Greedy on "Once upon a time" is the llama2.c golden continuation.
        assertThat(completions.get("req-0").getText())
            .startsWith(", there was a little girl named Lily.");
        assertThat(completions.get("req-0").getUsage().getCompletionTokens()).isEqualTo(24);
        assertThat(completions.get("req-2").getFinishReason()).isEqualTo("stop");
        StringBuilder streamed = new StringBuilder();
        chunks.getOrDefault("req-0", List.of()).stream()
            .sorted((a, b) -> Integer.compare(a.getIndex(), b.getIndex()))
            .forEach(c -> streamed.append(c.getTextDelta()));
        assertThat(streamed.toString()).isEqualTo(completions.get("req-0").getText());
        assertThat(chunks.get("req-0").stream().mapToInt(c -> c.getTokenIds().size()).sum())
            .as("every generated token streamed once")
            .isEqualTo(completions.get("req-0").getUsage().getCompletionTokens());
        assertThat(deadLetters)
            .extracting(DeadLetter::getStage)
            .containsExactlyInAnyOrder("decode", "validate");
        assertThat(deadLetters)
            .anySatisfy(d -> assertThat(d.getError()).isEqualTo("the prompt is empty"));
      } finally {
        if (!result.isDone()) {
          job.cancel().get();
        }
      }
    }
  }

  @Test
  @Timeout(180)
  void aJobDeployedAgainWithoutASavepointResumesWhereItsGroupCommitted() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(1, "prompts", "completions", "chunks", "dead-letters");
      PipelineSettings settings =
          PipelineTestSupport.settings(kafka, PipelineTestSupport.model(), 200).build();
      try (KafkaConsumer<byte[], byte[]> completions =
          PipelineTestSupport.committedConsumer(kafka, "completions")) {
        PipelineTestSupport.produce(kafka, "prompts", List.of(request(0), request(1)));
        JobClient first = start(settings);
        assertThat(PipelineTestSupport.awaitCompletions(completions, 2, Duration.ofSeconds(60)))
            .containsOnlyKeys("req-0", "req-1");
        awaitCommittedOffset(kafka, "flinfer", 2);
        first.cancel().get();

        // No savepoint: the new job starts from the offsets its group committed, not the beginning.
        PipelineTestSupport.produce(kafka, "prompts", List.of(request(2)));
        JobClient second = start(settings);
        try {
          assertThat(PipelineTestSupport.awaitCompletions(completions, 1, Duration.ofSeconds(60)))
              .containsOnlyKeys("req-2");
          PipelineTestSupport.assertNothingMore(completions, Duration.ofSeconds(2));
        } finally {
          second.cancel().get();
        }
      }
    }
  }

  private static JobClient start(PipelineSettings settings) throws Exception {
    Configuration conf = new Configuration();
    conf.setString("restart-strategy.type", "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
    FlinferPipeline.build(env, settings);
    return env.executeAsync("flinfer-it");
  }

  /** Waits until the source has committed {@code offset} on checkpoints for partition 0. */
  private static void awaitCommittedOffset(EmbeddedKafka kafka, String group, long offset)
      throws Exception {
    long end = System.currentTimeMillis() + 30_000;
    try (Admin admin = kafka.admin()) {
      while (System.currentTimeMillis() < end) {
        var committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        var p0 = committed.get(new TopicPartition("prompts", 0));
        if (p0 != null && p0.offset() >= offset) {
          return;
        }
        Thread.sleep(100);
      }
    }
    throw new AssertionError("group " + group + " never committed offset " + offset);
  }

  private static KafkaConsumer<byte[], byte[]> consumer(EmbeddedKafka kafka) {
    return new KafkaConsumer<>(
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
            ConsumerConfig.GROUP_ID_CONFIG, "it",
            ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
        new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }
}
