package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.runtime.testing.SharedFiles;
import org.junit.jupiter.api.Test;

/** {@code flinfer bench-job}: a small workload through the engine alone and through the job. */
class BenchJobCommandITCase {

  @Test
  void bothPathsServeTheWholeWorkloadOnTheNamedBackend() throws Exception {
    String out =
        CommandStdout.of(
            "bench-job",
            "--model",
            SharedFiles.stories260kDir().toString(),
            "--backend",
            "cpu",
            "--requests",
            "6",
            "--output-tokens",
            "4",
            "--repeats",
            "1",
            "--threads",
            "1");
    JsonNode json = new ObjectMapper().readTree(out);
    assertThat(json.get("backend").asText()).isEqualTo("cpu");
    // Every request's every token arrived on both paths: 6 requests of 4 tokens.
    assertThat(json.at("/engine_alone/outputTokens").asLong()).isEqualTo(24);
    assertThat(json.at("/through_kafka_and_flink/outputTokens").asLong()).isEqualTo(24);
    assertThat(json.at("/through_kafka_and_flink/outputTokensPerS").asDouble()).isPositive();
  }

  @Test
  void anUnknownBackendOrModelShapeIsAnErrorBeforeAnythingStarts() {
    assertThat(FlinferCommand.commandLine().execute("bench-job", "--backend", "banana"))
        .isEqualTo(2);
    assertThat(FlinferCommand.commandLine().execute("bench-job", "--model-shape", "llama-7q"))
        .isEqualTo(2);
  }
}
