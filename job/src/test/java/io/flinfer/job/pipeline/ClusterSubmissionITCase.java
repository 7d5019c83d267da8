package io.flinfer.job.pipeline;

import static io.flinfer.job.pipeline.PipelineTestSupport.awaitCompletions;
import static io.flinfer.job.pipeline.PipelineTestSupport.committedConsumer;
import static io.flinfer.job.pipeline.PipelineTestSupport.engineAlone;
import static io.flinfer.job.pipeline.PipelineTestSupport.longRequest;
import static io.flinfer.job.pipeline.PipelineTestSupport.produce;
import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.Completion;
import io.flinfer.avro.PromptRequest;
import io.flinfer.job.cli.FlinferCommand;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.runtime.testing.SharedFiles;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.client.ClientUtils;
import org.apache.flink.client.deployment.executors.RemoteExecutor;
import org.apache.flink.client.program.PackagedProgram;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.DefaultExecutorServiceLoader;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code flinfer job} as {@code flink run -d} runs it: the command's main inside Flink's client,
 * the job submitted detached over REST to a cluster that is already running, then prompts served
 * from Kafka with completions committed exactly once.
 */
class ClusterSubmissionITCase {
  @TempDir Path dir;

  @Test
  @Timeout(240)
  void theJobCommandSubmitsToARunningClusterAndServesPrompts() throws Exception {
    System.setProperty("org.apache.avro.SERIALIZABLE_PACKAGES", "io.flinfer.avro");
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(
          1, "flinfer.prompts", "flinfer.completions", "flinfer.chunks", "flinfer.dead-letters");
      Configuration clusterConf = new Configuration();
      clusterConf.set(RestOptions.PORT, 0);
      try (MiniCluster cluster =
          new MiniCluster(
              new MiniClusterConfiguration.Builder()
                  .setConfiguration(clusterConf)
                  .setNumTaskManagers(1)
                  .setNumSlotsPerTaskManager(2)
                  .build())) {
        cluster.start();
        URI rest = cluster.getRestAddress().get();
        Configuration client = new Configuration();
        client.set(DeploymentOptions.TARGET, RemoteExecutor.NAME);
        client.set(DeploymentOptions.ATTACHED, false);
        client.set(RestOptions.ADDRESS, rest.getHost());
        client.set(RestOptions.PORT, rest.getPort());
        PackagedProgram program =
            PackagedProgram.newBuilder()
                .setEntryPointClassName(FlinferCommand.class.getName())
                .setConfiguration(client)
                .setArguments(
                    "job",
                    "--bootstrap-servers",
                    kafka.bootstrapServers(),
                    "--model",
                    SharedFiles.stories260kDir().toString(),
                    "--backend",
                    "cpu",
                    "--checkpoint-interval-ms",
                    "300")
                .build();
        // What `flink run -d` does with the jar's main; it returns once the job is submitted.
        ClientUtils.executeProgram(
            new DefaultExecutorServiceLoader(), client, program, false, true);
        assertThat(cluster.listJobs().get())
            .extracting(JobStatusMessage::getJobName)
            .containsExactly("flinfer");

        List<PromptRequest> requests = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
          requests.add(longRequest(i));
        }
        produce(kafka, "flinfer.prompts", requests);
        try (var consumer = committedConsumer(kafka, "flinfer.completions")) {
          Map<String, Completion> done =
              awaitCompletions(consumer, requests.size(), Duration.ofSeconds(120));
          Map<String, String> expected = engineAlone(requests);
          assertThat(done).hasSize(requests.size());
          done.forEach((id, c) -> assertThat(c.getText()).as(id).isEqualTo(expected.get(id)));
        }
        for (JobStatusMessage job : cluster.listJobs().get()) {
          cluster.cancelJob(job.getJobId()).get();
        }
      }
    }
  }
}
