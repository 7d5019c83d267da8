package io.flinfer.runtime.gguf;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.Logits;
import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.generate.GenerationRequest;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * stories260K converted to GGUF in each tensor type: F32 gives the checkpoint's logits bit for bit;
 * the 16-bit and quantized types stay within stated tolerances of them.
 */
class GgufModelTest {
  @TempDir Path dir;

  @ParameterizedTest(name = "{0}: max relative logit error <= {1}")
  // Measured: F16 5.3e-4, BF16 5.1e-3, Q8_0 1.3e-2, Q4_0 0.33 (4 bits are coarse for a 260K model).
  @CsvSource({"F32, 0", "F16, 0.002", "BF16, 0.02", "Q8_0, 0.03", "Q4_0, 0.4"})
  void convertedModelMatchesTheCheckpoint(GgmlType type, float tolerance) throws Exception {
    LlamaModel original = SharedFiles.stories260k();
    Path file = dir.resolve("stories260K-" + type + ".gguf");
    ModelConversion.writeGguf(original, type, file);
    LlamaModel converted = ModelLoader.load(file, null);

    assertThat(converted.config()).isEqualTo(original.config());
    assertThat(converted.tokenizer().encode("Once upon a time, Lily", true))
        .containsExactly(original.tokenizer().encode("Once upon a time, Lily", true));

    int[] tokens = new Random(3).ints(48, 3, original.config().vocabSize()).toArray();
    float[] expected = logits(original, tokens);
    float[] actual = logits(converted, tokens);
    float scale = 0;
    float err = 0;
    for (int i = 0; i < expected.length; i++) {
      scale = Math.max(scale, Math.abs(expected[i]));
      err = Math.max(err, Math.abs(expected[i] - actual[i]));
    }
    if (tolerance == 0f) {
      assertThat(actual).containsExactly(expected);
    } else {
      assertThat(err / scale).isLessThanOrEqualTo(tolerance);
    }
    if (type == GgmlType.F32 || type == GgmlType.F16) {
      int[] prompt = converted.tokenizer().encode("Once upon a time", true);
      try (BatchGenerator g = new BatchGenerator(converted, 1, 512, 1)) {
        int[] out =
            g.generate(
                    List.of(new GenerationRequest(prompt, SamplingParams.GREEDY, 64, true)),
                    (r, i, t, lp) -> {})[0];
        assertThat(out).containsExactly(SharedFiles.goldenIds());
      }
    }
  }

  /** Logits of every position of a sequence prefilled in one extend. */
  private static float[] logits(LlamaModel model, int[] tokens) {
    ModelConfig c = model.config();
    ReqToTokenPool reqToToken = new ReqToTokenPool(tokens.length, 128);
    KvPool kv = new KvPool(tokens.length * tokens.length, c.layers(), c.kvHeads(), c.headDim(), 1);
    Logits all = new Logits(c.vocabSize());
    try (CpuModelRunner runner = new CpuModelRunner(model, kv, reqToToken, 1)) {
      // One request per prefix length, so each request's last-token logits cover a position.
      ForwardBatch batch = new ForwardBatch();
      int next = 1;
      for (int r = 0; r < tokens.length; r++) {
        int[] slots = new int[r + 1];
        for (int i = 0; i <= r; i++) {
          slots[i] = next++;
        }
        reqToToken.write(r, 0, slots);
        batch.add(r, 0, tokens, 0, r + 1, slots, 0);
      }
      runner.forward(batch, all);
    }
    return java.util.Arrays.copyOf(all.rows(), tokens.length * c.vocabSize());
  }
}
