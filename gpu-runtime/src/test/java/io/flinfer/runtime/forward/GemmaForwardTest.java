package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.gguf.RandomGgufModel;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.model.SlidingWindow;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.GemmaShapes;
import io.flinfer.runtime.testing.ZooGoldens;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gemma 3's forward pass on a random-weight file in its layout (scaled embedding, q/k norms, GeGLU,
 * post norms, windowed layers with their own rope): the CPU backend against the scalar reference,
 * the window's effect, and the determinism rule with windowed layers in the batch.
 */
class GemmaForwardTest {
  private static final int WINDOW = 8;

  @TempDir static Path dir;

  private static ModelConfig shape(SlidingWindow window) {
    return GemmaShapes.tiny(6, window);
  }

  private static LlamaModel load(ModelConfig c, String file) throws Exception {
    return ModelLoader.load(
        RandomGgufModel.write(c, GgmlType.F32, true, 3, dir.resolve(file)), null);
  }

  private static SlidingWindow window(float theta) {
    return new SlidingWindow(WINDOW, 3, new RopeConfig(RopeConfig.Style.NEOX, theta, null));
  }

  @Test
  void theFileLoadsAsTheShapeItWasWrittenIn() throws Exception {
    ModelConfig c = shape(window(1e4f));
    LlamaModel model = load(c, "gemma.gguf");
    assertThat(model.config()).isEqualTo(c);
    assertThat(model.config().windowed(0)).isTrue();
    assertThat(model.config().windowed(2)).isFalse();
    assertThat(model.config().rope(0).theta()).isEqualTo(1e4f);
    assertThat(model.config().rope(2).theta()).isEqualTo(1e6f);
  }

  /**
   * llama.cpp scales a 62-layer Gemma 3's queries by the model's width per head (27B's layout); so
   * does Flinfer (checked against llama.cpp on Gemma 2's 27B layout, which takes the same rule).
   */
  @Test
  void the27bLayoutScalesQueriesByTheModelsWidthPerHead() throws Exception {
    ModelConfig deep = GemmaShapes.tiny(62, window(1e4f));
    Path file = RandomGgufModel.write(deep, GgmlType.F32, true, 3, dir.resolve("deep.gguf"));
    assertThat(ModelLoader.load(file, null).config().attentionScale()).isEqualTo(0.25f);
  }

  @Test
  void cpuBackendAgreesWithTheScalarReferencePastTheWindow() throws Exception {
    LlamaModel model = load(shape(window(1e4f)), "gemma.gguf");
    int[] tokens = new Random(7).ints(30, 3, model.config().vocabSize()).toArray();
    // The first 12 in one extend (windowed rows of one tile see different windows), then decodes.
    ForwardRuns.assertAgreesWithTheReference(model, tokens, 12, CpuModelRunner::new, 1e-4);
  }

  /**
   * With the windowed layers' rope the global one's, the window alone separates the two models: the
   * same bits while every position is inside it, different ones once the first leaves it.
   */
  @Test
  void aWindowedLayerForgetsPositionsThatLeaveItsWindow() throws Exception {
    LlamaModel windowed = load(shape(window(1e6f)), "windowed.gguf");
    LlamaModel global = load(shape(null), "global.gguf");
    int[] tokens = new Random(5).ints(16, 3, 600).toArray();
    List<float[]> a = ForwardRuns.alone(windowed, tokens, 1, CpuModelRunner::new, 1);
    List<float[]> b = ForwardRuns.alone(global, tokens, 1, CpuModelRunner::new, 1);
    for (int p = 0; p < WINDOW; p++) {
      assertThat(a.get(p)).as("position %d", p).containsExactly(b.get(p));
    }
    for (int p = WINDOW; p < tokens.length; p++) {
      assertThat(ZooGoldens.maxRel(b.get(p), a.get(p))).as("position %d", p).isGreaterThan(1e-4);
    }
  }

  @Test
  void mixedBatchesAndChunksGiveEachSequenceItsAloneBits() throws Exception {
    LlamaModel model = load(shape(window(1e4f)), "gemma.gguf");
    ForwardRuns.assertMixedAndChunkedGiveAloneBits(
        model, new Random(42), 5, 600, CpuModelRunner::new);
  }
}
