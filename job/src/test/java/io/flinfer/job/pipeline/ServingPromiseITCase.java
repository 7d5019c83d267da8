package io.flinfer.job.pipeline;

import static io.flinfer.job.pipeline.PipelineTestSupport.bytes;
import static io.flinfer.job.pipeline.PipelineTestSupport.committedConsumer;
import static io.flinfer.job.pipeline.PipelineTestSupport.model;
import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.operators.flink.CarriedHeaders;
import io.flinfer.operators.request.RequestLimits;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The serving promise against hostile input, on a cluster that never restarts a job: a record over
 * any limit, undecodable bytes, an output too large for Kafka and duplicate request ids each get a
 * dead letter with its reason, the job keeps running, and every valid request is answered once.
 */
class ServingPromiseITCase {
  /** Small enough that a completion carrying 8 KB of metadata is too large to send. */
  private static final RequestLimits LIMITS =
      RequestLimits.builder().deadLetterEchoBytes(256).maxRecordBytes(8192).build();

  @TempDir Path dir;
  private EmbeddedKafka kafka;
  private MiniCluster cluster;
  private KafkaProducer<byte[], byte[]> producer;

  @BeforeEach
  void start() throws Exception {
    kafka = EmbeddedKafka.start(dir.resolve("kafka"));
    kafka.createTopics(2, "prompts", "completions", "chunks", "dead-letters");
    Configuration conf = new Configuration();
    // Any failure would end the job: the test sees it as FAILED.
    conf.setString("restart-strategy.type", "none");
    cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(2)
                .build());
    cluster.start();
    producer =
        new KafkaProducer<>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
            new ByteArraySerializer(),
            new ByteArraySerializer());
  }

  @AfterEach
  void stop() throws Exception {
    TestStreamEnvironment.unsetAsContext();
    if (producer != null) {
      producer.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (kafka != null) {
      kafka.close();
    }
  }

  private JobClient submit(String savepoint) throws Exception {
    TestStreamEnvironment.setAsContext(cluster, 2);
    Configuration conf = new Configuration();
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    FlinferPipeline.build(
        env,
        PipelineTestSupport.settings(kafka, model(), 200)
            .limits(LIMITS)
            .carryHeaders(CarriedHeaders.of(List.of("traceparent", "x-correlation-id")))
            .build());
    return env.executeAsync("serving-promise-it");
  }

  private void send(PromptRequest r) throws Exception {
    send(bytes(r.toByteBuffer()));
  }

  private void send(byte[] value) throws Exception {
    producer.send(new ProducerRecord<>("prompts", value)).get();
  }

  private static PromptRequest.Builder valid(String id) {
    return PromptRequest.newBuilder().setRequestId(id).setPrompt("Once upon a time");
  }

  /** What arrived on the completions and dead-letter topics, per request id. */
  private static final class Outcomes {
    final Map<String, List<Completion>> completions = new HashMap<>();
    final Map<String, List<DeadLetter>> deadLetters = new HashMap<>();
    final List<Integer> deadLetterSizes = new ArrayList<>();

    void poll(KafkaConsumer<byte[], byte[]> c, KafkaConsumer<byte[], byte[]> d) throws Exception {
      for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
        Completion x = Completion.fromByteBuffer(ByteBuffer.wrap(r.value()));
        completions.computeIfAbsent(x.getRequestId(), k -> new ArrayList<>()).add(x);
      }
      for (ConsumerRecord<byte[], byte[]> r : d.poll(Duration.ofMillis(100))) {
        DeadLetter x = DeadLetter.fromByteBuffer(ByteBuffer.wrap(r.value()));
        deadLetterSizes.add(r.serializedKeySize() + r.serializedValueSize());
        String id = x.getRequestId() == null ? "<none>" : x.getRequestId();
        deadLetters.computeIfAbsent(id, k -> new ArrayList<>()).add(x);
      }
    }

    int deadLetterCount() {
      return deadLetters.values().stream().mapToInt(List::size).sum();
    }
  }

  private static Outcomes await(
      int completions,
      int deadLetters,
      KafkaConsumer<byte[], byte[]> c,
      KafkaConsumer<byte[], byte[]> d)
      throws Exception {
    Outcomes o = new Outcomes();
    long end = System.currentTimeMillis() + 120_000;
    while ((o.completions.size() < completions || o.deadLetterCount() < deadLetters)
        && System.currentTimeMillis() < end) {
      o.poll(c, d);
    }
    // Nothing more arrives: no late repeats.
    long quiet = System.currentTimeMillis() + 2000;
    while (System.currentTimeMillis() < quiet) {
      o.poll(c, d);
    }
    return o;
  }

  @Test
  @Timeout(240)
  void poisonRecordsGetDeadLettersAndValidOnesBetweenThemAreServed() throws Exception {
    JobClient job = submit(null);
    String huge = "x".repeat(600_000);
    Map<String, String> manyEntries = new HashMap<>();
    for (int i = 0; i < 20_000; i++) {
      manyEntries.put("k" + i, "v");
    }
    send(valid("ok-0").build());
    send(valid(huge).build());
    send(valid("ok-1").build());
    send(valid("big-tenant").setTenant(huge).build());
    send(valid("big-metadata").setMetadata(manyEntries).build());
    send(valid("ok-2").build());
    send(valid("many-stops").setStop(Collections.nCopies(100, "a")).build());
    send(valid("big-prompt").setPrompt("Once upon a time ".repeat(55_000)).build());
    send(new byte[] {1, 2, 3});
    send(valid("ok-3").build());
    // Valid, but its completion carries 8,000 bytes of metadata: over the 8,192-byte records.
    send(valid("big-output").setMetadata(Map.of("note", "n".repeat(8000))).build());
    send(valid("ok-4").build());

    try (KafkaConsumer<byte[], byte[]> c = committedConsumer(kafka, "completions");
        KafkaConsumer<byte[], byte[]> d = committedConsumer(kafka, "dead-letters")) {
      Outcomes o = await(5, 7, c, d);
      assertThat(o.completions.keySet())
          .containsExactlyInAnyOrder("ok-0", "ok-1", "ok-2", "ok-3", "ok-4");
      o.completions.values().forEach(l -> assertThat(l).hasSize(1));
      assertThat(o.deadLetterCount()).isEqualTo(7);
      assertThat(reason(o, "x".repeat(253) + "…")).isEqualTo("limit_exceeded");
      assertThat(reason(o, "big-tenant")).isEqualTo("limit_exceeded");
      assertThat(reason(o, "big-metadata")).isEqualTo("limit_exceeded");
      assertThat(reason(o, "many-stops")).isEqualTo("limit_exceeded");
      assertThat(reason(o, "big-prompt")).isEqualTo("limit_exceeded");
      assertThat(reason(o, "<none>")).isEqualTo("undecodable");
      DeadLetter big = o.deadLetters.get("big-output").get(0);
      assertThat(big.getReason()).isEqualTo("output_too_large");
      assertThat(big.getStage()).isEqualTo("output");
      assertThat(big.getSourceTopic()).isEqualTo("prompts");
      // Dead letters echo at most 256 bytes of what they reject, and all fit the record limit.
      for (List<DeadLetter> l : o.deadLetters.values()) {
        assertThat(l.get(0).getRaw().remaining()).isLessThanOrEqualTo(256);
      }
      assertThat(o.deadLetterSizes).allSatisfy(s -> assertThat(s).isLessThanOrEqualTo(8192));
      assertThat(o.deadLetters.get("big-prompt").get(0).getRawSize()).isGreaterThan(900_000);
      assertThat(job.getJobStatus().get()).isEqualTo(JobStatus.RUNNING);
    } finally {
      job.cancel().get();
    }
  }

  private static String reason(Outcomes o, String id) {
    assertThat(o.deadLetters).containsKey(id);
    assertThat(o.deadLetters.get(id)).hasSize(1);
    return o.deadLetters.get(id).get(0).getReason();
  }

  @Test
  @Timeout(240)
  void aRequestIdIsAnsweredOnceInFlightAfterwardsAndAcrossARestore() throws Exception {
    JobClient first = submit(null);
    PromptRequest slow =
        valid("dup").setMaxNewTokens(400).setIgnoreEos(true).build(); // still running when ...
    send(slow);
    send(valid("dup").setPrompt("Another prompt").build()); // ... the same id arrives again
    try (KafkaConsumer<byte[], byte[]> c = committedConsumer(kafka, "completions");
        KafkaConsumer<byte[], byte[]> d = committedConsumer(kafka, "dead-letters")) {
      Outcomes o = await(1, 1, c, d);
      send(valid("dup").build()); // after it was answered
      Outcomes after = await(0, 1, c, d);
      String savepoint =
          first
              .stopWithSavepoint(
                  false,
                  dir.resolve("savepoints").toUri().toString(),
                  SavepointFormatType.CANONICAL)
              .get();
      JobClient second = submit(savepoint);
      try {
        send(valid("dup").build()); // after a restore
        send(valid("fresh").build());
        Outcomes restored = await(1, 1, c, d);
        assertThat(o.completions.get("dup")).hasSize(1);
        assertThat(o.completions.get("dup").get(0).getUsage().getCompletionTokens()).isEqualTo(400);
        assertThat(after.completions).isEmpty();
        assertThat(restored.completions.keySet()).containsExactly("fresh");
        List<DeadLetter> dl = new ArrayList<>();
        dl.addAll(o.deadLetters.getOrDefault("dup", List.of()));
        dl.addAll(after.deadLetters.getOrDefault("dup", List.of()));
        dl.addAll(restored.deadLetters.getOrDefault("dup", List.of()));
        assertThat(dl).hasSize(3);
        long firstOffset = o.completions.get("dup").get(0).getProvenance().getSourceOffset();
        int firstPartition = o.completions.get("dup").get(0).getProvenance().getSourcePartition();
        for (DeadLetter x : dl) {
          assertThat(x.getReason()).isEqualTo("duplicate_request_id");
          assertThat(x.getOriginalSourceOffset()).isEqualTo(firstOffset);
          assertThat(x.getOriginalSourcePartition()).isEqualTo(firstPartition);
        }
      } finally {
        second.cancel().get();
      }
    }
  }

  @Test
  @Timeout(120)
  void timesStartAtTheRecordsKafkaTimestamp() throws Exception {
    JobClient job = submit(null);
    try (KafkaConsumer<byte[], byte[]> c = committedConsumer(kafka, "completions");
        KafkaConsumer<byte[], byte[]> d = committedConsumer(kafka, "dead-letters")) {
      // Produced "three seconds ago": a client whose record waited that long to be read.
      long produced = System.currentTimeMillis() - 3000;
      producer
          .send(
              new ProducerRecord<>(
                  "prompts", null, produced, null, bytes(valid("timed").build().toByteBuffer())))
          .get();
      Completion done = await(1, 0, c, d).completions.get("timed").get(0);
      var t = done.getTimings();
      assertThat(t.getQueuedMs()).isGreaterThanOrEqualTo(3000);
      assertThat(t.getTimeToFirstTokenMs()).isGreaterThanOrEqualTo(t.getQueuedMs());
      assertThat(t.getTotalMs()).isGreaterThanOrEqualTo(t.getTimeToFirstTokenMs());
      // Inside the engine the first token came quickly; the wait was before it.
      assertThat(t.getEngineTimeToFirstTokenMs()).isLessThan(3000);
    } finally {
      job.cancel().get();
    }
  }

  /**
   * The headers the job carries travel with their request: into its metadata, and out on its
   * completion, on its chunks and on a dead letter about it, whatever made the dead letter
   * (undecodable bytes, a duplicate id, an output too large); other headers stay behind, and a
   * carried header that is not UTF-8 text is a dead letter naming it.
   */
  @Test
  @Timeout(240)
  void carriedHeadersTravelWithTheirRequests() throws Exception {
    JobClient job = submit(null);
    String trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    sendWithHeaders(
        bytes(
            valid("traced")
                .setStream(true)
                .setMetadata(Map.of("x-correlation-id", "from-metadata", "a", "b"))
                .build()
                .toByteBuffer()),
        "traceparent",
        trace.getBytes(StandardCharsets.UTF_8),
        "x-correlation-id",
        "c-1".getBytes(StandardCharsets.UTF_8),
        "other",
        "stays".getBytes(StandardCharsets.UTF_8));
    sendWithHeaders(
        new byte[] {1, 2, 3}, "traceparent", "t-bad-bytes".getBytes(StandardCharsets.UTF_8));
    sendWithHeaders(
        bytes(valid("traced").build().toByteBuffer()),
        "x-correlation-id",
        "c-dup".getBytes(StandardCharsets.UTF_8));
    sendWithHeaders(
        bytes(valid("not-text").build().toByteBuffer()),
        "traceparent",
        new byte[] {(byte) 0xff, (byte) 0xfe});
    sendWithHeaders(
        bytes(
            valid("traced-big")
                .setMetadata(Map.of("note", "n".repeat(8000)))
                .build()
                .toByteBuffer()),
        "x-correlation-id",
        "c-big".getBytes(StandardCharsets.UTF_8));
    // No header, but a metadata entry of a carried name: it goes out as a header too.
    sendWithHeaders(
        bytes(
            valid("meta-only")
                .setMetadata(Map.of("traceparent", "t-meta"))
                .build()
                .toByteBuffer()));
    // Over the 256 echo bytes: refused, and its dead letter carries none of them.
    sendWithHeaders(
        bytes(valid("long-header").build().toByteBuffer()),
        "traceparent",
        "t".repeat(300).getBytes(StandardCharsets.UTF_8));
    Map<String, Map<String, String>> completionHeaders = new HashMap<>();
    Map<String, Completion> completions = new HashMap<>();
    Map<String, Map<String, String>> deadLetterHeaders = new HashMap<>();
    Map<String, DeadLetter> deadLetters = new HashMap<>();
    List<Map<String, String>> chunkHeaders = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = committedConsumer(kafka, "completions");
        KafkaConsumer<byte[], byte[]> d = committedConsumer(kafka, "dead-letters");
        KafkaConsumer<byte[], byte[]> k = committedConsumer(kafka, "chunks")) {
      long end = System.currentTimeMillis() + 120_000;
      while ((completions.size() < 2 || deadLetters.size() < 5)
          && System.currentTimeMillis() < end) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
          Completion x = Completion.fromByteBuffer(ByteBuffer.wrap(r.value()));
          completions.put(x.getRequestId(), x);
          completionHeaders.put(x.getRequestId(), headers(r));
        }
        for (ConsumerRecord<byte[], byte[]> r : d.poll(Duration.ofMillis(100))) {
          DeadLetter x = DeadLetter.fromByteBuffer(ByteBuffer.wrap(r.value()));
          String key = x.getRequestId() == null ? "<none>" : x.getRequestId() + "/" + x.getReason();
          deadLetters.put(key, x);
          deadLetterHeaders.put(key, headers(r));
        }
        for (ConsumerRecord<byte[], byte[]> r : k.poll(Duration.ofMillis(100))) {
          CompletionChunk x = CompletionChunk.fromByteBuffer(ByteBuffer.wrap(r.value()));
          assertThat(x.getRequestId()).isEqualTo("traced");
          assertThat(x.getHeaders()).isEqualTo(headers(r));
          chunkHeaders.add(headers(r));
        }
      }
      // The header wins over a metadata entry of its name; others are not carried.
      Map<String, String> carried = Map.of("traceparent", trace, "x-correlation-id", "c-1");
      assertThat(completions).containsOnlyKeys("traced", "meta-only");
      assertThat(completionHeaders.get("meta-only")).isEqualTo(Map.of("traceparent", "t-meta"));
      assertThat(completionHeaders.get("traced")).isEqualTo(carried);
      // The streamed request's chunks carry them too, in the record and as its headers.
      assertThat(chunkHeaders).isNotEmpty().allSatisfy(h -> assertThat(h).isEqualTo(carried));
      assertThat(completions.get("traced").getMetadata())
          .containsAllEntriesOf(carried)
          .containsEntry("a", "b")
          .doesNotContainKey("other");
      assertThat(deadLetters)
          .containsOnlyKeys(
              "<none>",
              "traced/duplicate_request_id",
              "not-text/invalid_request",
              "long-header/limit_exceeded",
              "traced-big/output_too_large");
      assertThat(deadLetters.get("long-header/limit_exceeded").getError())
          .isEqualTo(
              "the carried headers are 311 bytes; the limit is 256 (the dead-letter echo bytes)");
      assertThat(deadLetterHeaders.get("long-header/limit_exceeded")).isEmpty();
      assertThat(deadLetterHeaders.get("<none>")).isEqualTo(Map.of("traceparent", "t-bad-bytes"));
      assertThat(deadLetters.get("<none>").getHeaders())
          .isEqualTo(Map.of("traceparent", "t-bad-bytes"));
      assertThat(deadLetterHeaders.get("traced/duplicate_request_id"))
          .isEqualTo(Map.of("x-correlation-id", "c-dup"));
      assertThat(deadLetters.get("not-text/invalid_request").getError())
          .isEqualTo("header traceparent is not UTF-8 text");
      assertThat(deadLetterHeaders.get("traced-big/output_too_large"))
          .isEqualTo(Map.of("x-correlation-id", "c-big"));
      assertThat(deadLetters.get("traced-big/output_too_large").getHeaders())
          .isEqualTo(Map.of("x-correlation-id", "c-big"));
    } finally {
      job.cancel().get();
    }
  }

  /** Sends {@code value} with headers given as name, value, name, value, ... */
  private void sendWithHeaders(byte[] value, Object... headers) throws Exception {
    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>("prompts", value);
    for (int i = 0; i < headers.length; i += 2) {
      r.headers().add((String) headers[i], (byte[]) headers[i + 1]);
    }
    producer.send(r).get();
  }

  private static Map<String, String> headers(ConsumerRecord<byte[], byte[]> r) {
    Map<String, String> out = new HashMap<>();
    for (Header h : r.headers()) {
      out.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
    }
    return out;
  }
}
