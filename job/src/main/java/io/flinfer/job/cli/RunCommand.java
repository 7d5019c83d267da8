package io.flinfer.job.cli;

import io.flinfer.avro.Completion;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.job.gateway.GatewayServer;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.job.model.ModelLocator;
import io.flinfer.job.pipeline.FlinferPipeline;
import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.format.RecordReader;
import io.flinfer.operators.format.SchemaRegistryClient;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.operators.request.Utf8;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The embedded default: a Kafka broker and a Flink MiniCluster (dashboard on localhost) in this
 * process, the topics, the job, the example prompts (and more from a file or stdin), and the
 * completions printed as they arrive.
 *
 * <p>Everything lives in a data folder, by default {@code ~/.cache/flinfer/run/}: the broker's log
 * (on a fixed port), the job's checkpoints, and the prompts still awaited. Started again after a
 * crash it resumes from the newest checkpoint, awaits the same prompts and prints their answers,
 * each once.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = "Run the streaming job on an in-process Kafka broker and Flink MiniCluster.")
public final class RunCommand implements Callable<Integer> {
  @Mixin ModelOptions modelOptions = new ModelOptions();

  @Mixin JobOptions jobOptions = new JobOptions();

  @Option(
      names = "--prompts",
      paramLabel = "FILE",
      description = "Prompts to send, one per line (default: the examples; - for stdin).")
  String prompts;

  @Option(
      names = "--once",
      description =
          "Exit when every prompt sent has completed (with --prompts -: once stdin has ended).")
  boolean once;

  @Option(names = "--max-new-tokens", defaultValue = "64")
  int maxNewTokens;

  @Option(names = "--parallelism", defaultValue = "1")
  int parallelism;

  @Option(
      names = "--web-port",
      defaultValue = "8081",
      description = "Flink dashboard port; 0: any free port (default: ${DEFAULT-VALUE}).")
  int webPort;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      description =
          "The broker's log, the job's checkpoints and the prompts still awaited, kept across"
              + " restarts (default: ~/.cache/flinfer/run).")
  Path dataDir;

  @Option(
      names = "--kafka-port",
      defaultValue = "19092",
      description =
          "The broker's port (its controller takes the next one); 0: free ports, for a run that"
              + " need not survive a restart (default: ${DEFAULT-VALUE}).")
  int kafkaPort;

  @Option(
      names = "--gateway-port",
      defaultValue = "8000",
      description =
          "Serve the OpenAI API on http://127.0.0.1:PORT/v1 (default: ${DEFAULT-VALUE}; 0: not"
              + " served).")
  int gatewayPort;

  @Mixin GatewayOptions gateway = new GatewayOptions();

  @Override
  public Integer call() throws Exception {
    System.setProperty("org.apache.avro.SERIALIZABLE_PACKAGES", "io.flinfer.avro");
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    // Every argument is checked before anything starts.
    ModelLocator.Location where = modelOptions.locate();
    jobOptions.engine.engineConfig();
    jobOptions.engine.checkBackend();
    RequestLimits limits = jobOptions.limits.limits();
    if (parallelism < 1) {
      throw new IllegalArgumentException("--parallelism must be at least 1");
    }
    if (maxNewTokens < 1 || maxNewTokens > limits.maxNewTokens()) {
      throw new IllegalArgumentException(
          "--max-new-tokens must be in [1, " + limits.maxNewTokens() + "]");
    }
    jobOptions.settings("127.0.0.1:9092", where); // validates every setting, connects nowhere
    List<String> initial = initialPrompts(limits.promptBytesFor(Integer.MAX_VALUE));
    if (webPort > 0) {
      EmbeddedKafka.requireFree(webPort, "--web-port");
    }
    jobOptions.metrics.check();
    if (gatewayPort > 0) {
      EmbeddedKafka.requireFree(gatewayPort, "--gateway-port");
    }
    Path data =
        dataDir != null
            ? dataDir
            : Path.of(System.getProperty("user.home"), ".cache", "flinfer", "run");
    Files.createDirectories(data);
    RunSession session = RunSession.resumeOrStart(data);
    try (EmbeddedKafka kafka = EmbeddedKafka.start(data.resolve("kafka"), kafkaPort)) {
      PipelineSettings settings = jobOptions.settings(kafka.bootstrapServers(), where);
      kafka.createTopics(
          Math.max(1, parallelism),
          settings.promptsTopic(),
          settings.completionsTopic(),
          settings.chunksTopic(),
          settings.deadLettersTopic());
      Configuration conf = new Configuration();
      conf.set(RestOptions.PORT, webPort);
      conf.setString("restart-strategy.type", "fixed-delay");
      conf.setString("restart-strategy.fixed-delay.attempts", "3");
      conf.setString("restart-strategy.fixed-delay.delay", "1 s");
      jobOptions.state.apply(conf, data.resolve("checkpoints").toString());
      jobOptions.metrics.apply(conf);
      StreamExecutionEnvironment env =
          StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(conf);
      env.setParallelism(parallelism);
      FlinferPipeline.build(env, settings);
      JobClient job = env.executeAsync("flinfer");
      GatewayServer api =
          gatewayPort > 0
              ? GatewayServer.start(gateway.settings(settings, "127.0.0.1", gatewayPort))
              : null;
      // Completes only when the job ends, which a streaming job never does on its own.
      CompletableFuture<JobExecutionResult> ended = job.getJobExecutionResult();
      out.printf(
          "Kafka at %s (data in %s), Flink dashboard at http://127.0.0.1:%d,%s model %s%n",
          kafka.bootstrapServers(),
          data,
          webPort,
          jobOptions.metrics.metricsPort > 0
              ? " Prometheus metrics at http://127.0.0.1:"
                  + jobOptions.metrics.metricsPort
                  + "/metrics,"
              : "",
          where.model());
      if (api != null) {
        out.printf(
            "OpenAI API at http://127.0.0.1:%d/v1 (model %s)%n", api.port(), settings.modelId());
      }
      try (KafkaProducer<byte[], byte[]> producer =
              new KafkaProducer<>(
                  Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                  new ByteArraySerializer(),
                  new ByteArraySerializer());
          KafkaConsumer<byte[], byte[]> consumer = consumer(kafka, settings, session.resumed())) {
        Readers readers = Readers.of(settings);
        if (session.resumed()) {
          System.err.printf(
              "resuming: %d prompts of the last run are still awaited; not sending the prompts"
                  + " again%n",
              session.pendingCount());
        } else {
          for (String prompt : initial) {
            send(producer, settings.promptsTopic(), session.send(), prompt);
          }
        }
        StdinLines stdin = null;
        if ("-".equals(prompts) || !once) {
          stdin = new StdinLines(System.in);
          System.err.println("reading more prompts from stdin, one per line (Ctrl-D ends input)");
        }
        while (!(once && (stdin == null || stdin.ended()) && session.pendingCount() == 0)) {
          for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
            print(out, r, settings, session, readers);
          }
          for (String line = stdin == null ? null : stdin.poll();
              line != null;
              line = stdin.poll()) {
            if (!line.isBlank()) {
              String error = tooLarge(line, limits.promptBytesFor(Integer.MAX_VALUE));
              if (error != null) {
                System.err.println("not sent: " + error);
              } else {
                send(producer, settings.promptsTopic(), session.send(), line);
              }
            }
          }
          if (ended.isDone()) {
            failEnded(ended);
          }
        }
        session.finish();
      } finally {
        if (api != null) {
          api.close();
        }
        if (!ended.isDone()) {
          job.cancel().get();
        }
      }
    }
    return 0;
  }

  /** Readers of the job's output, in whichever format it writes. */
  private record Readers(
      RecordReader<Completion> completions, RecordReader<DeadLetter> deadLetters) {
    static Readers of(PipelineSettings s) {
      SchemaRegistryClient registry =
          s.schemaRegistryUrl() == null ? null : new SchemaRegistryClient(s.schemaRegistryUrl());
      return new Readers(RecordReader.completions(registry), RecordReader.deadLetters(registry));
    }
  }

  private static void print(
      PrintStream out,
      ConsumerRecord<byte[], byte[]> r,
      PipelineSettings s,
      RunSession session,
      Readers readers)
      throws IOException {
    if (r.topic().equals(s.completionsTopic())) {
      Completion c = readers.completions().read(r.value()).record();
      if (session.answered(c.getRequestId())) {
        out.printf(
            "[%s] %s (%s, %d tokens, first token after %d ms)%n",
            c.getRequestId(),
            c.getText(),
            c.getFinishReason(),
            c.getUsage().getCompletionTokens(),
            c.getTimings().getTimeToFirstTokenMs());
      }
    } else {
      DeadLetter d = readers.deadLetters().read(r.value()).record();
      if (d.getRequestId() != null && session.answered(d.getRequestId())) {
        out.printf("[%s] rejected at %s: %s%n", d.getRequestId(), d.getStage(), d.getError());
      }
    }
  }

  /** Throws, naming the cause: the job has ended, which it never does on its own. */
  private static void failEnded(CompletableFuture<JobExecutionResult> ended) {
    try {
      ended.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new IllegalStateException("the job failed: " + FlinferCommand.oneLine(e), e);
    }
    throw new IllegalStateException("the job ended");
  }

  /** The prompts to send first, each checked against the prompt limit before anything starts. */
  private List<String> initialPrompts(int maxBytes) throws IOException {
    List<String> lines = new ArrayList<>();
    if ("-".equals(prompts)) {
      return lines; // read from stdin as they come
    }
    if (prompts != null && !Files.isRegularFile(Path.of(prompts))) {
      throw new IllegalArgumentException("--prompts: no such file: " + prompts);
    }
    InputStream in =
        prompts != null
            ? Files.newInputStream(Path.of(prompts))
            : RunCommand.class.getResourceAsStream("/examples/prompts.txt");
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      int n = 0;
      for (String line; (line = r.readLine()) != null; ) {
        n++;
        if (!line.isBlank()) {
          String error = tooLarge(line, maxBytes);
          if (error != null) {
            throw new IllegalArgumentException("--prompts line " + n + ": " + error);
          }
          lines.add(line);
        }
      }
    }
    return lines;
  }

  /** Why a prompt cannot be sent, or null: the job would reject it, or Kafka refuse it. */
  private static String tooLarge(String prompt, int maxBytes) {
    long bytes = Utf8.length(prompt);
    return bytes > maxBytes
        ? "the prompt is " + bytes + " bytes; the limit is " + maxBytes + " (--max-prompt-bytes)"
        : null;
  }

  private void send(KafkaProducer<byte[], byte[]> producer, String topic, String id, String prompt)
      throws Exception {
    PromptRequest req =
        PromptRequest.newBuilder()
            .setRequestId(id)
            .setPrompt(prompt)
            .setMaxNewTokens(maxNewTokens)
            .build();
    ByteBuffer b = req.toByteBuffer();
    byte[] bytes = new byte[b.remaining()];
    b.get(bytes);
    producer.send(new ProducerRecord<>(topic, id.getBytes(StandardCharsets.UTF_8), bytes)).get();
  }

  /**
   * Reads completions and dead letters (committed ones only): from the start of the topics when
   * resuming a session, whose answers may have come before the crash; else from their ends.
   */
  private static KafkaConsumer<byte[], byte[]> consumer(
      EmbeddedKafka kafka, PipelineSettings s, boolean fromStart) {
    KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    List<TopicPartition> parts = new ArrayList<>();
    for (String topic : List.of(s.completionsTopic(), s.deadLettersTopic())) {
      for (PartitionInfo p : c.partitionsFor(topic)) {
        parts.add(new TopicPartition(topic, p.partition()));
      }
    }
    c.assign(parts);
    if (fromStart) {
      c.seekToBeginning(parts);
    } else {
      c.seekToEnd(parts);
      parts.forEach(c::position); // fix the positions before any prompt is sent
    }
    return c;
  }
}
