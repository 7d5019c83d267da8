package io.flinfer.job.bench;

import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.job.pipeline.FlinferPipeline;
import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.engine.Engine;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.Req;
import io.flinfer.operators.engine.TokenEvent;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.forward.ModelRunners;
import io.flinfer.runtime.model.LlamaModel;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One workload through the engine alone and through Kafka and Flink (in-process broker and
 * MiniCluster, the same engine settings): output tokens/s of each and the time to first token, for
 * the job measured from the producer's send to the first chunk on the chunks topic.
 */
public final class JobBenchmark {
  /** Output tokens/s and time-to-first-token percentiles (ms) of one path. */
  public record Result(
      double outputTokensPerS, double ttftP50, double ttftP99, long outputTokens, double seconds) {}

  private final ModelSource source;
  private final LlamaModel model;
  private final int maxRunning;
  private final int poolTokens;
  private final int threads;
  private final String backend;

  /** Both paths on {@code backend} ({@code cpu}, {@code cuda} or {@code auto}). */
  public JobBenchmark(
      ModelSource source, int maxRunning, int poolTokens, int threads, String backend) {
    this.source = source;
    this.model = source.load();
    this.maxRunning = maxRunning;
    this.poolTokens = poolTokens;
    this.threads = threads;
    this.backend = backend;
  }

  /** Requests with random prompt tokens, greedy, streaming, each {@code output} tokens. */
  public List<PromptRequest> workload(
      String prefix, int n, int minPrompt, int maxPrompt, int output, long seed) {
    Random rnd = new Random(seed);
    List<PromptRequest> reqs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      List<Integer> ids = new ArrayList<>();
      ids.add(model.tokenizer().bosId());
      int len = minPrompt + rnd.nextInt(maxPrompt - minPrompt + 1);
      for (int k = 1; k < len; k++) {
        ids.add(3 + rnd.nextInt(model.config().vocabSize() - 3));
      }
      reqs.add(
          PromptRequest.newBuilder()
              .setRequestId(prefix + i)
              .setPromptTokenIds(ids)
              .setMaxNewTokens(output)
              .setIgnoreEos(true)
              .setStream(true)
              .setSampling(SamplingOptions.newBuilder().setTemperature(0f).build())
              .build());
    }
    return reqs;
  }

  /**
   * The same waves as {@link #throughJob}, on one engine as the job's operator has: warm-ups, then
   * each wave all at once, then {@code oneAtATime}, each submitted when the previous one finished.
   * One engine for all, because a pool that has served earlier waves is full of cached prefixes and
   * its slots are no longer handed out in order; a fresh engine per wave decodes faster than the
   * job's long-lived one can, and the ratio would measure that instead of Kafka and Flink.
   */
  public JobResults engineAlone(
      List<List<PromptRequest>> warmups,
      List<List<PromptRequest>> waves,
      List<PromptRequest> oneAtATime) {
    try (Engine e = engine()) {
      for (List<PromptRequest> warmup : warmups) {
        serve(e, warmup);
      }
      List<Result> loaded = new ArrayList<>();
      for (List<PromptRequest> wave : waves) {
        loaded.add(serve(e, wave));
      }
      List<Result> each = new ArrayList<>();
      for (PromptRequest r : oneAtATime) {
        each.add(serve(e, List.of(r)));
      }
      return new JobResults(loaded, combine(each));
    }
  }

  private Engine engine() {
    return new Engine(
        model,
        EngineConfig.builder()
            .maxRunningRequests(maxRunning)
            .maxTotalTokens(poolTokens)
            .threads(threads)
            .build(),
        ModelRunners.byName(backend));
  }

  private Result serve(Engine e, List<PromptRequest> reqs) {
    RequestValidator v =
        new RequestValidator(
            model.tokenizer(),
            model.config().contextLength(),
            RequestLimits.builder().maxNewTokens(1 << 20).build(),
            Set.of());
    // Every request of the wave is offered at its start, as the Kafka path sends them all at
    // once: both paths time a first token from the same instant, the queue's wait included.
    long start = System.nanoTime();
    List<Double> ttft = new ArrayList<>();
    long tokens = 0;
    int next = 0;
    while (next < reqs.size() || e.hasWork()) {
      while (next < reqs.size() && e.canAccept()) {
        Req r = v.validate(reqs.get(next++), 0).request().req();
        e.submit(r);
      }
      List<TokenEvent> events = e.step();
      long t = System.nanoTime();
      for (TokenEvent ev : events) {
        if (ev.index() == 0) {
          ttft.add((t - start) / 1e6);
        }
        if (ev.index() >= 0) {
          tokens++;
        }
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Result(
        tokens / seconds, percentile(ttft, 50), percentile(ttft, 99), tokens, seconds);
  }

  /** Requests served one after another: their first-token times pooled, tokens over time. */
  private static Result combine(List<Result> each) {
    List<Double> ttft = new ArrayList<>();
    long tokens = 0;
    double seconds = 0;
    for (Result r : each) {
      ttft.add(r.ttftP50());
      tokens += r.outputTokens();
      seconds += r.seconds();
    }
    return new Result(
        tokens / seconds, percentile(ttft, 50), percentile(ttft, 99), tokens, seconds);
  }

  /** What one path measured: each wave of requests sent all at once, then one at a time. */
  public record JobResults(List<Result> allAtOnce, Result oneAtATime) {}

  /** The run of median duration. */
  public static Result median(List<Result> runs) {
    List<Result> sorted = new ArrayList<>(runs);
    sorted.sort(Comparator.comparingDouble(Result::seconds));
    return sorted.get(sorted.size() / 2);
  }

  /**
   * Warm-up waves first (model load, and the compiler, which otherwise takes a core from the engine
   * for many seconds), then each wave of the workload all at once (throughput from first send to
   * last chunk), then {@code oneAtATime}, each sent when the previous one's last chunk came.
   */
  public JobResults throughJob(
      List<List<PromptRequest>> warmups,
      List<List<PromptRequest>> waves,
      List<PromptRequest> oneAtATime,
      long checkpointMillis)
      throws Exception {
    Path data = Files.createTempDirectory("flinfer-bench-job");
    try (EmbeddedKafka kafka = EmbeddedKafka.start(data.resolve("kafka"))) {
      kafka.createTopics(1, "prompts", "completions", "chunks", "dead-letters");
      PipelineSettings settings =
          PipelineSettings.builder()
              .bootstrapServers(kafka.bootstrapServers())
              .topics("prompts", "completions", "chunks", "dead-letters")
              .model(source, "bench")
              .engine(
                  EngineConfig.builder()
                      .maxRunningRequests(maxRunning)
                      .maxTotalTokens(poolTokens)
                      .chunkedPrefillSize(512)
                      .threads(threads)
                      .build(),
                  backend)
              .limits(RequestLimits.builder().maxNewTokens(1 << 20).build())
              .checkpointIntervalMillis(checkpointMillis)
              .build();
      Configuration conf = new Configuration();
      conf.setString("restart-strategy.type", "none");
      StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
      FlinferPipeline.build(env, settings);
      JobClient job = env.executeAsync("flinfer-bench");
      try (KafkaProducer<byte[], byte[]> producer =
              new KafkaProducer<>(
                  Map.of(
                      ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                      kafka.bootstrapServers(),
                      ProducerConfig.LINGER_MS_CONFIG,
                      0),
                  new ByteArraySerializer(),
                  new ByteArraySerializer());
          KafkaConsumer<byte[], byte[]> chunks =
              new KafkaConsumer<>(
                  Map.of(
                      ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                      kafka.bootstrapServers(),
                      ConsumerConfig.GROUP_ID_CONFIG,
                      "bench",
                      ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                      "latest",
                      ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG,
                      5),
                  new ByteArrayDeserializer(),
                  new ByteArrayDeserializer())) {
        chunks.subscribe(List.of("chunks"));
        while (chunks.assignment().isEmpty()) {
          chunks.poll(Duration.ofMillis(50));
        }
        for (List<PromptRequest> warmup : warmups) {
          drive(producer, chunks, warmup);
        }
        List<Result> loaded = new ArrayList<>();
        for (List<PromptRequest> wave : waves) {
          loaded.add(drive(producer, chunks, wave));
        }
        List<Result> each = new ArrayList<>();
        for (PromptRequest r : oneAtATime) {
          each.add(drive(producer, chunks, List.of(r)));
        }
        return new JobResults(loaded, combine(each));
      } finally {
        job.cancel().get();
      }
    }
  }

  private Result drive(
      KafkaProducer<byte[], byte[]> producer,
      KafkaConsumer<byte[], byte[]> chunks,
      List<PromptRequest> reqs)
      throws Exception {
    Map<String, Integer> seen = new HashMap<>();
    List<Double> ttft = new ArrayList<>();
    long expected = 0;
    java.util.Set<String> ids = new java.util.HashSet<>();
    long start = System.nanoTime();
    for (PromptRequest r : reqs) {
      ids.add(r.getRequestId());
      ByteBuffer b = r.toByteBuffer();
      byte[] bytes = new byte[b.remaining()];
      b.get(bytes);
      producer.send(new ProducerRecord<>("prompts", bytes));
      expected += r.getMaxNewTokens();
    }
    producer.flush();
    long tokens = 0;
    long last = start;
    long deadline = System.currentTimeMillis() + 30 * 60_000;
    while (tokens < expected && System.currentTimeMillis() < deadline) {
      for (ConsumerRecord<byte[], byte[]> rec : chunks.poll(Duration.ofMillis(20))) {
        long t = System.nanoTime();
        CompletionChunk c = CompletionChunk.fromByteBuffer(ByteBuffer.wrap(rec.value()));
        if (!ids.contains(c.getRequestId())) {
          continue;
        }
        if (seen.merge(c.getRequestId(), 1, Integer::sum) == 1) {
          ttft.add((t - start) / 1e6);
        }
        tokens += c.getTokenIds().size();
        last = t;
      }
    }
    if (tokens < expected) {
      throw new IllegalStateException(
          "the job served "
              + tokens
              + " of "
              + expected
              + " tokens before the 30-minute deadline: no figures from a partial wave");
    }
    double seconds = (last - start) / 1e9;
    return new Result(
        tokens / seconds, percentile(ttft, 50), percentile(ttft, 99), tokens, seconds);
  }

  private static double percentile(List<Double> v, int p) {
    if (v.isEmpty()) {
      return 0;
    }
    double[] a = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return a[Math.min(a.length - 1, (int) Math.ceil(p / 100.0 * a.length) - 1)];
  }
}
