package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** bench-kernel measures every batch size and round it is asked for, on the same weights. */
class BenchKernelCommandTest {
  @Test
  void everyRoundIsReportedAndRepeatsTheSameOutputs() throws Exception {
    JsonNode root =
        new ObjectMapper()
            .readTree(
                CommandStdout.of(
                    "bench-kernel",
                    "--type",
                    "q8_0",
                    "--rows",
                    "64",
                    "--cols",
                    "96",
                    "--tokens",
                    "1,5",
                    "--threads",
                    "2",
                    "--seconds",
                    "0.05",
                    "--rounds",
                    "2"));
    assertThat(root.get("type").asText()).isEqualTo("Q8_0");
    assertThat(root.get("weight_bytes").asLong()).isEqualTo(64L * 96 / 32 * 34);
    assertThat(root.get("cpu").asText()).isNotBlank();
    assertThat(root.get("activations").asText()).isEqualTo("ggml");
    JsonNode results = root.get("results");
    assertThat(results).hasSize(4);
    for (JsonNode r : results) {
      assertThat(r.get("gflop_per_s").asDouble()).isPositive();
      assertThat(r.get("weight_gb_per_s").asDouble()).isPositive();
    }
    // The same tokens each round: a kernel's outputs do not change between runs.
    assertThat(results.get(0).get("output_bits_checksum"))
        .isEqualTo(results.get(1).get("output_bits_checksum"));
    assertThat(results.get(2).get("output_bits_checksum"))
        .isEqualTo(results.get(3).get("output_bits_checksum"));
    assertThat(results.get(0).get("tokens").asInt()).isEqualTo(1);
    assertThat(results.get(2).get("tokens").asInt()).isEqualTo(5);
  }
}
