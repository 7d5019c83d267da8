package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * bench-format times a mask at every place it names, each with the tokens allowed there, a new
 * request's first mask and a repeated one.
 */
class BenchFormatCommandTest {
  @Test
  void everyPlaceIsTimedWithItsAllowedTokens() throws Exception {
    Path vocab = SharedFiles.root().resolve("tokenizers/ggml-vocab-llama-spm.gguf");
    assumeTrue(Files.exists(vocab), "missing " + vocab);
    JsonNode root =
        new ObjectMapper()
            .readTree(
                CommandStdout.of(
                    "bench-format", "--vocabulary", vocab.toString(), "--seconds", "0.02"));
    assertThat(root.get("vocab_size").asInt()).isEqualTo(32000);
    assertThat(root.get("cpu").asText()).isNotBlank();
    JsonNode results = root.get("results");
    assertThat(results).hasSize(13);
    for (JsonNode r : results) {
      assertThat(r.get("allowed_tokens").asInt()).as(r.toString()).isPositive();
      // A kept mask is a copy, which may round to nothing; a mask made is timed above zero.
      assertThat(r.get("masks").asLong()).isPositive();
      assertThat(r.get("micros_per_mask").asDouble()).isNotNegative();
      assertThat(r.get("micros_first_mask").asDouble()).isPositive();
      assertThat(r.get("micros_first_mask_of_process").asDouble()).isPositive();
    }
    // Inside a string nearly every token fits; in "tr" only the ones that go on with "ue".
    assertThat(results.get(0).get("allowed_tokens").asInt()).isGreaterThan(20_000);
    assertThat(results.get(3).get("allowed_tokens").asInt()).isLessThan(10);
    // Inside a thought every token with text fits: none of them closes it.
    assertThat(results.get(10).get("allowed_tokens").asInt()).isGreaterThan(31_000);
    assertThat(results.get(11).get("format").asText()).isEqualTo("regex");
    assertThat(results.get(12).get("format").asText()).isEqualTo("grammar");
  }
}
