package io.flinfer.job.pipeline;

import static io.flinfer.job.pipeline.PipelineTestSupport.assertNothingMore;
import static io.flinfer.job.pipeline.PipelineTestSupport.awaitCompletions;
import static io.flinfer.job.pipeline.PipelineTestSupport.committedConsumer;
import static io.flinfer.job.pipeline.PipelineTestSupport.engineAlone;
import static io.flinfer.job.pipeline.PipelineTestSupport.longRequest;
import static io.flinfer.job.pipeline.PipelineTestSupport.model;
import static io.flinfer.job.pipeline.PipelineTestSupport.produce;
import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.Completion;
import io.flinfer.avro.PromptRequest;
import io.flinfer.job.kafka.EmbeddedKafka;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failures mid-generation: an injected fault, a lost TaskManager, and a stop-with-savepoint
 * restored at another parallelism. Each time a read-committed consumer sees every completion
 * exactly once, identical to what the engine alone produces.
 */
class FlinferFailureITCase {
  private static final int REQUESTS = 8;

  @TempDir Path dir;
  private EmbeddedKafka kafka;
  private MiniCluster cluster;
  private List<PromptRequest> requests;

  @BeforeEach
  void start() throws Exception {
    kafka = EmbeddedKafka.start(dir.resolve("kafka"));
    kafka.createTopics(2, "prompts", "completions", "chunks", "dead-letters");
    requests = new ArrayList<>();
    for (int i = 0; i < REQUESTS; i++) {
      requests.add(longRequest(i));
    }
    produce(kafka, "prompts", requests);
    Configuration conf = new Configuration();
    conf.setString("restart-strategy.type", "fixed-delay");
    conf.setString("restart-strategy.fixed-delay.attempts", "5");
    conf.setString("restart-strategy.fixed-delay.delay", "200 ms");
    conf.setString("pipeline.generic-types", "false");
    cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(2)
                .setNumSlotsPerTaskManager(2)
                .build());
    cluster.start();
    PipelineTestSupport.Throttle.reset();
  }

  @AfterEach
  void stop() throws Exception {
    TestStreamEnvironment.unsetAsContext();
    if (cluster != null) {
      cluster.close();
    }
    if (kafka != null) {
      kafka.close();
    }
  }

  private JobClient submit(int parallelism, PipelineTestSupport.Throttle tap, String savepoint)
      throws Exception {
    TestStreamEnvironment.setAsContext(cluster, parallelism);
    Configuration conf = new Configuration();
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    PipelineSettings settings = PipelineTestSupport.settings(kafka, model(), 200).build();
    FlinferPipeline.build(env, settings, tap);
    return env.executeAsync("flinfer-failure-it");
  }

  private void assertExactlyOnceAndIdentical(KafkaConsumer<byte[], byte[]> consumer)
      throws Exception {
    Map<String, Completion> got = awaitCompletions(consumer, REQUESTS, Duration.ofSeconds(150));
    assertThat(got).hasSize(REQUESTS);
    Map<String, String> expected = engineAlone(requests);
    for (PromptRequest r : requests) {
      assertThat(got.get(r.getRequestId()).getText())
          .as(r.getRequestId())
          .isEqualTo(expected.get(r.getRequestId()));
      assertThat(got.get(r.getRequestId()).getUsage().getCompletionTokens())
          .isEqualTo(r.getMaxNewTokens());
    }
    assertNothingMore(consumer, Duration.ofSeconds(2));
  }

  @Test
  @Timeout(240)
  void anInjectedFaultMidGenerationChangesNothingDownstream() throws Exception {
    JobClient job = submit(2, new PipelineTestSupport.Throttle(3, 300), null);
    try (KafkaConsumer<byte[], byte[]> consumer = committedConsumer(kafka, "completions")) {
      assertExactlyOnceAndIdentical(consumer);
      assertThat(PipelineTestSupport.Throttle.FIRED).isTrue();
    } finally {
      job.cancel().get();
    }
  }

  @Test
  @Timeout(240)
  void losingATaskManagerMidGenerationChangesNothingDownstream() throws Exception {
    JobClient job = submit(2, new PipelineTestSupport.Throttle(3, 0), null);
    try (KafkaConsumer<byte[], byte[]> consumer = committedConsumer(kafka, "completions")) {
      long deadline = System.currentTimeMillis() + 60_000;
      while (PipelineTestSupport.Throttle.SEEN.get() == 0
          && System.currentTimeMillis() < deadline) {
        Thread.sleep(20);
      }
      Thread.sleep(1500); // several checkpoints in, generation still running
      cluster.terminateTaskManager(0).get();
      assertExactlyOnceAndIdentical(consumer);
    } finally {
      job.cancel().get();
    }
  }

  @Test
  @Timeout(240)
  void aSavepointRestoredAtAnotherParallelismCompletesEveryRequest() throws Exception {
    JobClient first = submit(2, new PipelineTestSupport.Throttle(3, 0), null);
    Thread.sleep(2500);
    String savepoint =
        first
            .stopWithSavepoint(
                false, dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
            .get();
    JobClient second = submit(1, new PipelineTestSupport.Throttle(0, 0), savepoint);
    try (KafkaConsumer<byte[], byte[]> consumer = committedConsumer(kafka, "completions")) {
      assertExactlyOnceAndIdentical(consumer);
    } finally {
      second.cancel().get();
    }
  }
}
