package io.flinfer.job.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.Completion;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.job.cli.FlinferCommand;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.runtime.testing.SharedFiles;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole processes killed with SIGKILL mid-generation and started again the same way: {@code flinfer
 * job} with a state folder (the broker outlives it), and {@code flinfer run} with a data folder
 * (the broker dies with it). Every request gets exactly one completion, identical to what an
 * uninterrupted engine produces.
 */
class ProcessCrashITCase {
  @TempDir Path dir;

  /** A child JVM running {@code flinfer args...}, its output in {@code log}. */
  private static Process flinfer(Path log, List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.add("--add-modules");
    cmd.add("jdk.incubator.vector");
    cmd.add("--add-opens=java.base/java.util=ALL-UNNAMED");
    cmd.add("-Xmx1g");
    // Flink unpacks its RPC system into the temporary folder and a killed JVM never deletes it:
    // the test's folder, removed with it.
    Path tmp = Files.createDirectories(log.resolveSibling("tmp"));
    cmd.add("-Djava.io.tmpdir=" + tmp);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(FlinferCommand.class.getName());
    cmd.addAll(args);
    return new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
  }

  private static void killHard(Process p) throws InterruptedException {
    p.destroyForcibly(); // SIGKILL: no shutdown hook, no clean close of anything
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
  }

  private static void await(String what, Duration timeout, BooleanSupplier done)
      throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!done.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(end);
      Thread.sleep(100);
    }
  }

  private static boolean hasCheckpoint(Path stateDir) {
    return DurableState.newestCheckpoint(stateDir.toUri()).isPresent();
  }

  private static List<PromptRequest> requests(int n) {
    String[] starts = {"Once upon a time", "Lily and Ben", "The sun was hot", "Tom had a red ball"};
    List<PromptRequest> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      SamplingOptions s =
          i % 2 == 0
              ? SamplingOptions.newBuilder().setTemperature(0f).build()
              : SamplingOptions.newBuilder().setTemperature(0.9f).setTopK(40).build();
      out.add(
          PromptRequest.newBuilder()
              .setRequestId("crash-" + i)
              .setPrompt(starts[i % starts.length])
              .setSampling(s)
              .setMaxNewTokens(80 + 20 * (i % 6))
              .setIgnoreEos(true)
              .build());
    }
    return out;
  }

  /** Reads committed completions, counting each request id's. */
  private static final class Completions implements AutoCloseable {
    final KafkaConsumer<byte[], byte[]> consumer;
    final Map<String, List<Completion>> byId = new HashMap<>();

    Completions(String bootstrap) {
      consumer =
          new KafkaConsumer<>(
              Map.of(
                  ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                  ConsumerConfig.GROUP_ID_CONFIG, "crash-verify",
                  ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                  ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
              new ByteArrayDeserializer(),
              new ByteArrayDeserializer());
      consumer.subscribe(List.of("completions", "flinfer.completions"));
    }

    int poll() {
      try {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          Completion c = Completion.fromByteBuffer(ByteBuffer.wrap(r.value()));
          byId.computeIfAbsent(c.getRequestId(), k -> new ArrayList<>()).add(c);
        }
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      return byId.size();
    }

    @Override
    public void close() {
      consumer.close();
    }
  }

  private static List<String> jobArgs(String bootstrap, Path stateDir) {
    return List.of(
        "job",
        "--bootstrap-servers",
        bootstrap,
        "--model",
        SharedFiles.stories260kDir().toString(),
        "--state-dir",
        stateDir.toString(),
        "--checkpoint-interval-ms",
        "300",
        "--max-running-requests",
        "32",
        "--max-total-tokens",
        "16384",
        "--engine-threads",
        "1",
        "--backend",
        "cpu",
        "--prompts-topic",
        "prompts",
        "--completions-topic",
        "completions",
        "--chunks-topic",
        "chunks",
        "--dead-letters-topic",
        "dead-letters",
        "--metrics-port",
        "0");
  }

  @Test
  @Timeout(420)
  void aKilledJobStartedAgainAnswersEveryRequestOnce() throws Exception {
    int n = 120;
    List<PromptRequest> requests = requests(n);
    Path stateDir = dir.resolve("state");
    Path log = dir.resolve("job.log");
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(2, "prompts", "completions", "chunks", "dead-letters");
      PipelineTestSupport.produce(kafka, "prompts", requests);
      try (Completions done = new Completions(kafka.bootstrapServers())) {
        Process first = flinfer(log, jobArgs(kafka.bootstrapServers(), stateDir));
        // At least one checkpoint, some answers, and at least 50 requests still in flight.
        await(
            "a checkpoint and a few completions",
            Duration.ofSeconds(180),
            () -> hasCheckpoint(stateDir) && done.poll() >= 5);
        assertThat(done.byId.size()).as("requests answered before the kill").isLessThan(n - 50);
        killHard(first);
        int beforeRestart = done.poll();

        Process second = flinfer(log, jobArgs(kafka.bootstrapServers(), stateDir));
        try {
          await("every completion", Duration.ofSeconds(240), () -> done.poll() >= n);
          long quiet = System.currentTimeMillis() + 3000;
          while (System.currentTimeMillis() < quiet) {
            done.poll();
          }
        } finally {
          killHard(second);
        }
        assertThat(Files.readString(log, StandardCharsets.UTF_8)).contains("resuming from");
        assertThat(beforeRestart).isLessThan(n);
        Map<String, String> expected = PipelineTestSupport.engineAlone(requests);
        assertThat(done.byId).hasSize(n);
        for (PromptRequest r : requests) {
          List<Completion> got = done.byId.get(r.getRequestId());
          assertThat(got).as(r.getRequestId()).hasSize(1);
          assertThat(got.get(0).getText()).isEqualTo(expected.get(r.getRequestId()));
          assertThat(got.get(0).getUsage().getCompletionTokens()).isEqualTo(r.getMaxNewTokens());
        }
      }
    }
  }

  /**
   * A conversation that returns after its job was killed and started again finds its prefix in the
   * storage tier: the new process starts with an empty pool and host tier, so every cached token of
   * its second turn comes from the pages the first process wrote, and its text is what the engine
   * alone gives.
   */
  @Test
  @Timeout(300)
  void aConversationReturningAfterAKillFindsItsPrefixInStorage() throws Exception {
    Path stateDir = dir.resolve("state");
    Path storage = dir.resolve("kv-pages");
    Path log = dir.resolve("job.log");
    String opening =
        "Once upon a time, there was a little girl named Lily. She loved to play outside in the"
            + " sunshine with her dog. One day, she saw a big red ball in the park near her house.";
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(1, "prompts", "completions", "chunks", "dead-letters");
      List<String> args = new ArrayList<>(jobArgs(kafka.bootstrapServers(), stateDir));
      args.addAll(List.of("--hicache-ratio", "1", "--hicache-storage-dir", storage.toString()));
      try (Completions done = new Completions(kafka.bootstrapServers())) {
        PipelineTestSupport.produce(kafka, "prompts", List.of(greedy("turn-1", opening, 40)));
        Process first = flinfer(log, args);
        try {
          await("the first turn", Duration.ofSeconds(180), () -> done.poll() >= 1);
          // Pages are written from a background thread: the kill comes once they are there.
          await("pages in storage", Duration.ofSeconds(30), () -> files(storage) >= 3);
        } finally {
          killHard(first);
        }
        String answer = done.byId.get("turn-1").get(0).getText();
        PromptRequest turn2 = greedy("turn-2", opening + answer + " Then", 20);
        PipelineTestSupport.produce(kafka, "prompts", List.of(turn2));
        Process second = flinfer(log, args);
        try {
          await("the second turn", Duration.ofSeconds(180), () -> done.poll() >= 2);
        } finally {
          killHard(second);
        }
        Completion c = done.byId.get("turn-2").get(0);
        assertThat(c.getUsage().getCachedTokens())
            .as("prefix tokens found after the restart")
            .isGreaterThanOrEqualTo(32);
        assertThat(c.getText())
            .isEqualTo(PipelineTestSupport.engineAlone(List.of(turn2)).get("turn-2"));
      }
    }
  }

  private static PromptRequest greedy(String id, String prompt, int maxNewTokens) {
    return PromptRequest.newBuilder()
        .setRequestId(id)
        .setPrompt(prompt)
        .setSampling(SamplingOptions.newBuilder().setTemperature(0f).build())
        .setMaxNewTokens(maxNewTokens)
        .setIgnoreEos(true)
        .build();
  }

  /** Regular files under {@code dir}, 0 while it does not exist. */
  private static long files(Path dir) {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (var walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile).count();
    } catch (IOException | java.io.UncheckedIOException e) {
      return 0; // a page renamed while listed: look again
    }
  }

  /** A port whose successor is free too (the embedded broker's controller takes it). */
  private static int freePortPair() throws IOException {
    for (int attempt = 0; attempt < 50; attempt++) {
      int p;
      try (ServerSocket s = new ServerSocket(0)) {
        p = s.getLocalPort();
      }
      try (ServerSocket s = new ServerSocket(p + 1)) {
        return p;
      } catch (IOException taken) {
        // try another
      }
    }
    throw new IOException("no two free ports in a row");
  }

  @Test
  @Timeout(420)
  void aKilledEmbeddedRunStartedAgainAnswersEveryPromptOnce() throws Exception {
    int n = 60;
    StringBuilder lines = new StringBuilder();
    String[] starts = {"Once upon a time", "Lily and Ben", "The sun was hot", "Tom had a red ball"};
    for (int i = 0; i < n; i++) {
      lines.append(starts[i % starts.length]).append(' ').append(i).append('\n');
    }
    Path prompts = Files.writeString(dir.resolve("prompts.txt"), lines);
    Path data = dir.resolve("data");
    int port = freePortPair();
    List<String> args =
        List.of(
            "run",
            "--once",
            "--data-dir",
            data.toString(),
            "--kafka-port",
            String.valueOf(port),
            "--gateway-port",
            "0",
            "--metrics-port",
            "0",
            "--web-port",
            "0",
            "--prompts",
            prompts.toString(),
            "--max-new-tokens",
            "150",
            // Two at a time, so that the run is still sending answers when it is killed (all 60
            // prompts at once took stories260K about a second, and a run that finished before the
            // kill left nothing to resume).
            "--max-running-requests",
            "2",
            "--engine-threads",
            "1",
            "--checkpoint-interval-ms",
            "300",
            "--model",
            SharedFiles.stories260kDir().toString(),
            "--backend",
            "cpu");
    Path log1 = dir.resolve("run1.log");
    Process first = flinfer(log1, args);
    await(
        "a checkpoint and a few printed completions",
        Duration.ofSeconds(180),
        () -> hasCheckpoint(data.resolve("checkpoints")) && printed(log1) >= 3);
    assertThat(printed(log1)).as("answered before the kill").isLessThan(n);
    killHard(first);
    assertThat(data.resolve("pending-requests"))
        .as("the killed run's prompts, still awaited")
        .exists();

    Path log2 = dir.resolve("run2.log");
    Process second = flinfer(log2, args);
    assertThat(second.waitFor(300, TimeUnit.SECONDS)).as("the second run ends").isTrue();
    String out2 = Files.readString(log2, StandardCharsets.UTF_8);
    assertThat(second.exitValue()).as(out2).isZero();
    assertThat(out2).contains("prompts of the last run are still awaited");
    assertThat(data.resolve("pending-requests")).doesNotExist();

    // The broker's log survived both processes: read it back.
    try (EmbeddedKafka kafka = EmbeddedKafka.start(data.resolve("kafka"), port);
        Completions done = new Completions(kafka.bootstrapServers())) {
      await("the completions", Duration.ofSeconds(60), () -> done.poll() >= n);
      long quiet = System.currentTimeMillis() + 2000;
      while (System.currentTimeMillis() < quiet) {
        done.poll();
      }
      assertThat(done.byId).hasSize(n);
      done.byId.forEach((id, l) -> assertThat(l).as(id).hasSize(1));
    }
  }

  private static long printed(Path log) {
    try {
      return Files.readAllLines(log, StandardCharsets.UTF_8).stream()
          .filter(l -> l.startsWith("[run-"))
          .count();
    } catch (IOException e) {
      return 0;
    }
  }
}
