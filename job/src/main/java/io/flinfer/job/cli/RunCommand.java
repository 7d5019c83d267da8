package io.flinfer.job.cli;

import io.flinfer.avro.Completion;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.job.model.ModelLocator;
import io.flinfer.job.pipeline.FlinferPipeline;
import io.flinfer.job.pipeline.PipelineSettings;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
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
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The embedded default: a Kafka broker and a Flink MiniCluster (dashboard on localhost) in this
 * process, the topics, the job, the example prompts (and more from a file or stdin), and the
 * completions printed as they arrive.
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

  @Option(names = "--once", description = "Exit when every prompt sent has completed.")
  boolean once;

  @Option(names = "--max-new-tokens", defaultValue = "64")
  int maxNewTokens;

  @Option(names = "--parallelism", defaultValue = "1")
  int parallelism;

  @Option(
      names = "--web-port",
      defaultValue = "8081",
      description = "Flink dashboard port (default: ${DEFAULT-VALUE}).")
  int webPort;

  @Override
  public Integer call() throws Exception {
    System.setProperty("org.apache.avro.SERIALIZABLE_PACKAGES", "io.flinfer.avro");
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    ModelLocator.Location where;
    try {
      where = modelOptions.locate();
      jobOptions.engine.engineConfig();
      jobOptions.engine.checkBackend();
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      return 2;
    }
    Path data = Files.createTempDirectory("flinfer-run");
    try (EmbeddedKafka kafka = EmbeddedKafka.start(data.resolve("kafka"))) {
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
      StreamExecutionEnvironment env =
          StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(conf);
      env.setParallelism(parallelism);
      FlinferPipeline.build(env, settings);
      JobClient job = env.executeAsync("flinfer");
      System.err.printf(
          "Kafka at %s, Flink dashboard at http://127.0.0.1:%d, model %s%n",
          kafka.bootstrapServers(), webPort, where.model());
      Set<String> pending = new HashSet<>();
      try (KafkaProducer<byte[], byte[]> producer =
              new KafkaProducer<>(
                  Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                  new ByteArraySerializer(),
                  new ByteArraySerializer());
          KafkaConsumer<byte[], byte[]> consumer = consumer(kafka, settings)) {
        int n = 0;
        for (String prompt : initialPrompts()) {
          pending.add(send(producer, settings.promptsTopic(), "prompt-" + n++, prompt));
        }
        BufferedReader stdin =
            "-".equals(prompts) || !once
                ? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                : null;
        while (!(once && pending.isEmpty())) {
          for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
            if (r.topic().equals(settings.completionsTopic())) {
              Completion c = Completion.fromByteBuffer(ByteBuffer.wrap(r.value()));
              pending.remove(c.getRequestId());
              out.printf(
                  "[%s] %s (%s, %d tokens, first token after %d ms)%n",
                  c.getRequestId(),
                  c.getText(),
                  c.getFinishReason(),
                  c.getUsage().getCompletionTokens(),
                  c.getTimings().getTimeToFirstTokenMs());
            } else {
              DeadLetter d = DeadLetter.fromByteBuffer(ByteBuffer.wrap(r.value()));
              pending.remove(d.getRequestId());
              out.printf("[%s] rejected at %s: %s%n", d.getRequestId(), d.getStage(), d.getError());
            }
          }
          if (stdin != null && !once && stdin.ready()) {
            String line = stdin.readLine();
            if (line != null && !line.isBlank()) {
              pending.add(send(producer, settings.promptsTopic(), "prompt-" + n++, line));
            }
          }
        }
      } finally {
        job.cancel().get();
      }
    }
    return 0;
  }

  private List<String> initialPrompts() throws IOException {
    List<String> lines = new ArrayList<>();
    if ("-".equals(prompts)) {
      return lines; // read from stdin as they come
    }
    InputStream in =
        prompts != null
            ? Files.newInputStream(Path.of(prompts))
            : RunCommand.class.getResourceAsStream("/examples/prompts.txt");
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        if (!line.isBlank()) {
          lines.add(line);
        }
      }
    }
    return lines;
  }

  private String send(
      KafkaProducer<byte[], byte[]> producer, String topic, String id, String prompt)
      throws IOException {
    PromptRequest req =
        PromptRequest.newBuilder()
            .setRequestId(id)
            .setPrompt(prompt)
            .setMaxNewTokens(maxNewTokens)
            .build();
    ByteBuffer b = req.toByteBuffer();
    byte[] bytes = new byte[b.remaining()];
    b.get(bytes);
    producer.send(new ProducerRecord<>(topic, id.getBytes(StandardCharsets.UTF_8), bytes));
    producer.flush();
    return id;
  }

  private static KafkaConsumer<byte[], byte[]> consumer(EmbeddedKafka kafka, PipelineSettings s) {
    KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "flinfer-run-printer",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    c.subscribe(List.of(s.completionsTopic(), s.deadLettersTopic()));
    return c;
  }
}
