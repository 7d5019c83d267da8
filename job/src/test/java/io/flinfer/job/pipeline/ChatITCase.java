package io.flinfer.job.pipeline;

import static io.flinfer.job.pipeline.PipelineTestSupport.committedConsumer;
import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.ChatMessage;
import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.job.cli.CommandStdout;
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
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Conversations through Kafka and Flink to real families' layouts and vocabularies: each request's
 * tokens are exactly those {@code generate --chat} produces for the same messages.
 */
class ChatITCase {
  private static final String[][] CONVERSATIONS = {
    {"system", "You are a concise assistant.", "user", "What is the capital of France?"},
    {"user", "Hi! Can you help me with math?", "assistant", "Of course.", "user", "12 * 7?"},
    {"user", "日本語で「こんにちは」は？ Привет! 👋"},
  };

  @TempDir Path dir;

  private static List<ChatMessage> messages(String[] turns) {
    List<ChatMessage> out = new ArrayList<>();
    for (int i = 0; i < turns.length; i += 2) {
      out.add(new ChatMessage(turns[i], turns[i + 1], List.of(), null, null));
    }
    return out;
  }

  private static String json(String[] turns) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < turns.length; i += 2) {
      b.append(i == 0 ? "" : ",")
          .append("{\"role\":\"")
          .append(turns[i])
          .append("\",\"content\":\"")
          .append(turns[i + 1].replace("\"", "\\\""))
          .append("\"}");
    }
    return b.append("]").toString();
  }

  /** What {@code flinfer generate --chat --token-ids} prints for a conversation. */
  private static String generate(Path model, String[] turns) {
    return CommandStdout.of(
            "generate",
            "--model",
            model.toString(),
            "--messages",
            json(turns),
            "--max-new-tokens",
            "12",
            "--token-ids")
        .trim();
  }

  @ParameterizedTest
  @ValueSource(strings = {"qwen3-tiny", "llama3-tiny"})
  @Timeout(180)
  void chatRequestsGetTheTokensGenerateGives(String name) throws Exception {
    Path model = SharedFiles.root().resolve("models/zoo/" + name + ".gguf");
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(1, "prompts", "completions", "chunks", "dead-letters");
      List<PromptRequest> requests = new ArrayList<>();
      for (int i = 0; i < CONVERSATIONS.length; i++) {
        requests.add(
            PromptRequest.newBuilder()
                .setRequestId("chat-" + i)
                .setMessages(messages(CONVERSATIONS[i]))
                .setSampling(SamplingOptions.newBuilder().setTemperature(0f).build())
                .setMaxNewTokens(12)
                .setStream(true)
                .build());
      }
      PipelineTestSupport.produce(kafka, "prompts", requests);
      StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
      FlinferPipeline.build(
          env,
          PipelineTestSupport.settings(kafka, new ModelSource(model.toString(), null), 200)
              .model(new ModelSource(model.toString(), null), name)
              .build());
      JobClient job = env.executeAsync("chat-it");
      try (KafkaConsumer<byte[], byte[]> completions = committedConsumer(kafka, "completions");
          KafkaConsumer<byte[], byte[]> chunks = committedConsumer(kafka, "chunks")) {
        Map<String, TreeMap<Integer, List<Integer>>> tokens = new HashMap<>();
        Map<String, Completion> done = new HashMap<>();
        long end = System.currentTimeMillis() + 120_000;
        while (done.size() < requests.size() && System.currentTimeMillis() < end) {
          for (ConsumerRecord<byte[], byte[]> r : completions.poll(Duration.ofMillis(100))) {
            Completion c = Completion.fromByteBuffer(ByteBuffer.wrap(r.value()));
            done.put(c.getRequestId(), c);
          }
          for (ConsumerRecord<byte[], byte[]> r : chunks.poll(Duration.ofMillis(100))) {
            CompletionChunk c = CompletionChunk.fromByteBuffer(ByteBuffer.wrap(r.value()));
            tokens
                .computeIfAbsent(c.getRequestId(), k -> new TreeMap<>())
                .put(c.getIndex(), c.getTokenIds());
          }
        }
        // The last chunks may trail their completion by a poll.
        for (int k = 0; k < 10; k++) {
          for (ConsumerRecord<byte[], byte[]> r : chunks.poll(Duration.ofMillis(100))) {
            CompletionChunk c = CompletionChunk.fromByteBuffer(ByteBuffer.wrap(r.value()));
            tokens
                .computeIfAbsent(c.getRequestId(), x -> new TreeMap<>())
                .put(c.getIndex(), c.getTokenIds());
          }
        }
        assertThat(done).hasSize(requests.size());
        for (int i = 0; i < CONVERSATIONS.length; i++) {
          StringBuilder got = new StringBuilder();
          for (List<Integer> ids : tokens.get("chat-" + i).values()) {
            for (int id : ids) {
              got.append(got.length() == 0 ? "" : " ").append(id);
            }
          }
          assertThat(got.toString())
              .as("%s conversation %d", name, i)
              .isEqualTo(generate(model, CONVERSATIONS[i]));
        }
      } finally {
        job.cancel().get();
      }
    }
  }
}
