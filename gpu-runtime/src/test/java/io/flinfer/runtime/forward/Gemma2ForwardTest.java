package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.cuda.CudaModelRunner;
import io.flinfer.runtime.gguf.RandomGgufModel;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.GemmaShapes;
import io.flinfer.runtime.testing.LlamaCppGoldens;
import io.flinfer.runtime.testing.ZooGoldens;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gemma 2's forward pass (Gemma's layout without q/k norms, every other layer windowed with the
 * global rope, attention scores and logits soft-capped) on random-weight files: against llama.cpp,
 * against the scalar reference, and under the determinism rule.
 */
class Gemma2ForwardTest {
  private static final int WINDOW = 8;

  @TempDir static Path dir;

  private static LlamaModel load(ModelConfig c, String file) throws Exception {
    return ModelLoader.load(
        RandomGgufModel.write(c, GgmlType.F32, true, 3, dir.resolve(file)), null);
  }

  /** Caps small enough to bend these random weights' scores and logits. */
  private static ModelConfig shape(int layers) {
    return GemmaShapes.gemma2(layers, WINDOW, 0.5f, 10f);
  }

  @Test
  void theFileLoadsAsTheShapeItWasWrittenIn() throws Exception {
    ModelConfig c = shape(4);
    LlamaModel model = load(c, "gemma2.gguf");
    assertThat(model.config()).isEqualTo(c);
    assertThat(model.config().windowed(0)).isTrue();
    assertThat(model.config().windowed(1)).isFalse();
    assertThat(model.config().rope(0)).isEqualTo(model.config().rope(1));
    assertThat(CudaModelRunner.unsupported(model.config()))
        .hasValueSatisfying(why -> assertThat(why).contains("soft-cap"));
  }

  /**
   * The same shape llama.cpp (c392e50, which knows Gemma 2 only at 26, 42 or 46 layers) ran: its
   * last-position logits on two prompts, one longer than the window, and its greedy steps (their
   * margins 0.37 to 1.4). The file is written again here from its seed; {@code resources/gemma2}
   * holds what llama.cpp gave.
   */
  @Test
  void matchesLlamaCpp() throws Exception {
    // The zoo's tolerance for float32 models (golden/zoo/index.json); measured 2.2e-4 and 1.2e-4.
    LlamaCppGoldens.assertMatches(load(shape(26), "gemma2-26.gguf"), "gemma2", "g2", 1e-3);
  }

  @Test
  void cpuBackendAgreesWithTheScalarReferencePastTheWindow() throws Exception {
    LlamaModel model = load(shape(4), "gemma2.gguf");
    int[] tokens = new Random(7).ints(30, 3, model.config().vocabSize()).toArray();
    // The first 12 in one extend (windowed rows of one tile see different windows), then decodes.
    ForwardRuns.assertAgreesWithTheReference(model, tokens, 12, CpuModelRunner::new, 1e-4);
  }

  /** The caps change the logits: the same weights without them give others. */
  @Test
  void theCapsBendScoresAndLogits() throws Exception {
    LlamaModel capped = load(shape(4), "gemma2.gguf");
    LlamaModel uncapped = load(GemmaShapes.gemma2(4, WINDOW, 0f, 0f), "uncapped.gguf");
    LlamaModel scoresOnly = load(GemmaShapes.gemma2(4, WINDOW, 0.5f, 0f), "scores-only.gguf");
    int[] tokens = new Random(3).ints(12, 3, 600).toArray();
    float[] a = ForwardRuns.alone(capped, tokens, 12, CpuModelRunner::new, 1).get(0);
    float[] b = ForwardRuns.alone(uncapped, tokens, 12, CpuModelRunner::new, 1).get(0);
    float[] c = ForwardRuns.alone(scoresOnly, tokens, 12, CpuModelRunner::new, 1).get(0);
    assertThat(ZooGoldens.maxRel(b, c)).isGreaterThan(1e-3);
    for (float v : a) {
      assertThat(Math.abs(v)).isLessThan(10f);
    }
    assertThat(ZooGoldens.maxRel(c, a)).isGreaterThan(1e-3);
  }

  @Test
  void mixedBatchesAndChunksGiveEachSequenceItsAloneBits() throws Exception {
    LlamaModel model = load(shape(4), "gemma2.gguf");
    ForwardRuns.assertMixedAndChunkedGiveAloneBits(
        model, new Random(42), 5, 600, CpuModelRunner::new);
  }

  /**
   * A 46-layer Gemma 2 whose head width is not dim / heads (27B's layout): llama.cpp scales its
   * queries by 1/sqrt(dim / heads), and so does Flinfer ({@code resources/gemma2-27b}).
   */
  @Test
  void the27bLayoutScalesQueriesByTheModelsWidthPerHead() throws Exception {
    ModelConfig wide = shape(46).toBuilder().headDim(32).build();
    LlamaModel model = load(wide, "gemma2-27b.gguf");
    assertThat(model.config().attentionScale()).isEqualTo(0.25f);
    LlamaCppGoldens.assertMatches(model, "gemma2-27b", "g27", 1e-3);
  }
}
