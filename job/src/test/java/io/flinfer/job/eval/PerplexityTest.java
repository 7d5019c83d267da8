package io.flinfer.job.eval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.runtime.forward.ReferenceForward;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/**
 * Perplexity as llama-perplexity measures it equals the same sum over the plain reference forward
 * pass, and does not depend on how many windows run at once.
 */
class PerplexityTest {
  private static final int CTX = 48;

  private static EngineConfig parallel(int n) {
    return EngineConfig.builder()
        .maxRunningRequests(n)
        .maxTotalTokens(n * (CTX + 1) + 16)
        .radixCache(false)
        .chunkedPrefillSize(32)
        .threads(2)
        .build();
  }

  @Test
  void theEstimateIsTheReferenceForwardsAndTheSameAtAnyParallelism() throws Exception {
    LlamaModel model = SharedFiles.stories260k();
    String text =
        Files.readString(SharedFiles.root().resolve("golden/stories260K-greedy.txt"))
            .replaceAll("(?m)^#.*\\n", "");
    int[] tokens = model.tokenizer().encode(text, model.tokenizer().addBos());
    assertThat(tokens.length).isGreaterThan(6 * CTX);
    Perplexity.Result one = Perplexity.measure(model, tokens, CTX, 5, parallel(1));
    Perplexity.Result four = Perplexity.measure(model, tokens, CTX, 5, parallel(4));
    assertThat(one.windows()).isEqualTo(5);
    assertThat(one.scored()).isEqualTo(5 * (CTX - 1 - CTX / 2));
    assertThat(four.running()).isEqualTo(one.running());
    assertThat(four.ppl()).isEqualTo(one.ppl());

    double nll = 0;
    double nll2 = 0;
    int count = 0;
    for (int w = 0; w < 5; w++) {
      ReferenceForward f = new ReferenceForward(model);
      for (int j = 0; j < CTX - 1; j++) {
        int token = j == 0 ? model.tokenizer().bosId() : tokens[w * CTX + j];
        float[] logits = f.next(token);
        if (j >= CTX / 2) {
          double v = -logSoftmax(logits, tokens[w * CTX + j + 1]);
          nll += v;
          nll2 += v * v;
          count++;
        }
      }
      assertThat(one.running()[w]).isCloseTo(Math.exp(nll / count), within(1e-4 * one.ppl()));
    }
    double mean = nll / count;
    double err = Math.sqrt((nll2 / count - mean * mean) / (count - 1)) * Math.exp(mean);
    assertThat(one.ppl()).isCloseTo(Math.exp(mean), within(1e-4 * one.ppl()));
    assertThat(one.plusMinus()).isCloseTo(err, within(1e-3 * err));
  }

  @Test
  void aTextShorterThanTwoWindowsIsRefused() {
    LlamaModel model = SharedFiles.stories260k();
    int[] tokens = model.tokenizer().encode("Once upon a time", true);
    assertThatThrownBy(() -> Perplexity.measure(model, tokens, 8, 0, parallel(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs at least 16");
  }

  private static double logSoftmax(float[] logits, int token) {
    double max = Double.NEGATIVE_INFINITY;
    for (float l : logits) {
      max = Math.max(max, l);
    }
    double sum = 0;
    for (float l : logits) {
      sum += Math.exp(l - max);
    }
    return logits[token] - max - Math.log(sum);
  }
}
