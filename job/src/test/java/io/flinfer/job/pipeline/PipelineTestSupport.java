package io.flinfer.job.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.Completion;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.operators.detokenize.IncrementalDetokenizer;
import io.flinfer.operators.engine.Engine;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.Req;
import io.flinfer.operators.engine.TokenEvent;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.operators.flink.TokenOutput;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Prompts, consumers and the engine-alone reference shared by the pipeline integration tests. */
final class PipelineTestSupport {
  private PipelineTestSupport() {}

  static ModelSource model() {
    Path dir = SharedFiles.stories260kDir();
    return new ModelSource(
        dir.resolve("stories260K.bin").toString(), dir.resolve("tok512.bin").toString());
  }

  /**
   * The pipeline the tests run: the stories260K model on a small CPU engine (8 running requests,
   * 2,048 KV tokens, 64-token prefill chunks, one thread), checkpoints every {@code checkpointMs}.
   */
  static PipelineSettings.Builder settings(
      EmbeddedKafka kafka, ModelSource model, long checkpointMs) {
    return settings(kafka.bootstrapServers(), model, checkpointMs);
  }

  static PipelineSettings.Builder settings(
      String bootstrapServers, ModelSource model, long checkpointMs) {
    return PipelineSettings.builder()
        .bootstrapServers(bootstrapServers)
        .topics("prompts", "completions", "chunks", "dead-letters")
        .model(model, "stories260K")
        .engine(
            EngineConfig.builder()
                .maxRunningRequests(8)
                .maxTotalTokens(2048)
                .chunkedPrefillSize(64)
                .threads(1)
                .build(),
            "cpu")
        .checkpointIntervalMillis(checkpointMs);
  }

  /** Requests long enough that a fault lands mid-generation: greedy and seeded, 60-200 tokens. */
  static PromptRequest longRequest(int i) {
    String[] starts = {
      "Once upon a time",
      "Lily and Ben",
      "The sun was hot",
      "Tom had a red ball",
      "A little bird",
      "Sue liked to",
      "The dog ran",
      "Mom said"
    };
    SamplingOptions s =
        i % 2 == 0
            ? SamplingOptions.newBuilder().setTemperature(0f).build()
            : SamplingOptions.newBuilder().setTemperature(0.9f).setTopK(40).build();
    return PromptRequest.newBuilder()
        .setRequestId("long-" + i)
        .setPrompt(starts[i % starts.length])
        .setSampling(s)
        .setMaxNewTokens(60 + 20 * i)
        .setIgnoreEos(true)
        .build();
  }

  static void produce(EmbeddedKafka kafka, String topic, List<PromptRequest> requests)
      throws Exception {
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      for (PromptRequest r : requests) {
        producer.send(new ProducerRecord<>(topic, bytes(r.toByteBuffer())));
      }
    }
  }

  static KafkaConsumer<byte[], byte[]> committedConsumer(EmbeddedKafka kafka, String... topics) {
    KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "verify-" + String.join("-", topics),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    c.subscribe(List.of(topics));
    return c;
  }

  /** Polls until {@code n} completions arrived (or the time is up), asserting none repeats. */
  static Map<String, Completion> awaitCompletions(
      KafkaConsumer<byte[], byte[]> consumer, int n, Duration timeout) throws Exception {
    Map<String, Completion> out = new TreeMap<>();
    long end = System.currentTimeMillis() + timeout.toMillis();
    while (out.size() < n && System.currentTimeMillis() < end) {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        Completion c = Completion.fromByteBuffer(ByteBuffer.wrap(r.value()));
        assertThat(out.put(c.getRequestId(), c))
            .as("completion %s delivered twice", c.getRequestId())
            .isNull();
      }
    }
    return out;
  }

  /** After the expected completions, nothing else arrives for a while (no late duplicates). */
  static void assertNothingMore(KafkaConsumer<byte[], byte[]> consumer, Duration quiet) {
    long end = System.currentTimeMillis() + quiet.toMillis();
    while (System.currentTimeMillis() < end) {
      assertThat(consumer.poll(Duration.ofMillis(200)).count())
          .as("unexpected extra completions")
          .isZero();
    }
  }

  /** The text the engine alone produces for each request, detokenized as the job does. */
  static Map<String, String> engineAlone(List<PromptRequest> requests) {
    LlamaModel model = model().load();
    RequestValidator v =
        new RequestValidator(
            model.tokenizer(), model.config().contextLength(), RequestLimits.defaults(), Set.of());
    Map<String, String> out = new HashMap<>();
    for (PromptRequest r : requests) {
      RequestValidator.Outcome o = v.validate(r, 0);
      Req req = o.request().req();
      int[] ids = o.request().promptIds();
      IncrementalDetokenizer d =
          new IncrementalDetokenizer(model.tokenizer(), ids[ids.length - 1], r.getStop());
      try (Engine e =
          Engine.create(
              model,
              EngineConfig.builder()
                  .maxRunningRequests(1)
                  .maxTotalTokens(1024)
                  .threads(1)
                  .build())) {
        e.submit(req);
        while (e.hasWork()) {
          for (TokenEvent ev : e.step()) {
            if (ev.index() >= 0) {
              d.next(ev.tokenId());
            }
          }
        }
      }
      d.finish();
      out.put(r.getRequestId(), d.text());
    }
    return out;
  }

  static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  /**
   * Slows token outputs down, by a pause per token they carry (so faults and savepoints land
   * mid-generation, however many tokens travel together), and, if asked, fails the task once after
   * a number of tokens. The counters are static: they survive the restart.
   */
  static final class Throttle implements MapFunction<TokenOutput, TokenOutput> {
    static final AtomicInteger SEEN = new AtomicInteger();
    static final AtomicBoolean FIRED = new AtomicBoolean();
    private final long sleepMillis;
    private final int failAfter;

    Throttle(long sleepMillis, int failAfter) {
      this.sleepMillis = sleepMillis;
      this.failAfter = failAfter;
    }

    static void reset() {
      SEEN.set(0);
      FIRED.set(false);
    }

    @Override
    public TokenOutput map(TokenOutput t) throws Exception {
      int tokens = Math.max(1, t.tokenIds.length);
      Thread.sleep(sleepMillis * tokens);
      int seen = SEEN.addAndGet(tokens);
      if (failAfter > 0 && seen >= failAfter && FIRED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected fault after " + failAfter + " tokens");
      }
      return t;
    }
  }
}
