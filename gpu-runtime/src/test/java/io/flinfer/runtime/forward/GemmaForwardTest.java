package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.runtime.gguf.RandomGgufModel;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelFormatException;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.model.SlidingWindow;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.GemmaShapes;
import io.flinfer.runtime.testing.ZooGoldens;
import java.nio.file.Path;
import java.util.ArrayList;
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

  /** llama.cpp scales a 62-layer Gemma 3's queries by the model's width per head: refused. */
  @Test
  void aQueryScaleOtherThanTheHeadsIsALoadError() throws Exception {
    ModelConfig deep = GemmaShapes.tiny(62, window(1e4f));
    Path file = RandomGgufModel.write(deep, GgmlType.F32, true, 3, dir.resolve("deep.gguf"));
    assertThatThrownBy(() -> ModelLoader.load(file, null))
        .isInstanceOf(ModelFormatException.class)
        .hasMessageContaining("1/sqrt(16)");
  }

  @Test
  void cpuBackendAgreesWithTheScalarReferencePastTheWindow() throws Exception {
    LlamaModel model = load(shape(window(1e4f)), "gemma.gguf");
    int[] tokens = new Random(7).ints(30, 3, model.config().vocabSize()).toArray();
    // The first 12 in one extend (windowed rows of one tile see different windows), then decodes.
    List<float[]> fast = ForwardRuns.alone(model, tokens, 12, CpuModelRunner::new, 2);
    ReferenceForward ref = new ReferenceForward(model);
    List<float[]> expected = new ArrayList<>();
    for (int i = 0; i < tokens.length; i++) {
      float[] logits = ref.next(tokens[i]);
      if (i >= 11) {
        expected.add(logits);
      }
    }
    assertThat(fast).hasSameSizeAs(expected);
    for (int i = 0; i < fast.size(); i++) {
      assertThat(ZooGoldens.maxRel(expected.get(i), fast.get(i)))
          .as("position %d", 11 + i)
          .isLessThan(1e-4);
    }
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
    Random rnd = new Random(42);
    int n = 5;
    int[][] tokens = new int[n][];
    int[] promptLen = new int[n];
    for (int s = 0; s < n; s++) {
      tokens[s] = rnd.ints(10 + rnd.nextInt(30), 3, 600).toArray();
      promptLen[s] = 2 + rnd.nextInt(tokens[s].length - 4);
    }
    List<List<float[]>> batched =
        ForwardRuns.mixed(model, tokens, promptLen, rnd, CpuModelRunner::new, 2);
    for (int s = 0; s < n; s++) {
      List<float[]> alone =
          ForwardRuns.alone(model, tokens[s], promptLen[s], CpuModelRunner::new, 1);
      List<float[]> chunked =
          ForwardRuns.chunked(model, tokens[s], promptLen[s], 3, CpuModelRunner::new, 2);
      assertThat(batched.get(s)).hasSameSizeAs(alone);
      for (int i = 0; i < alone.size(); i++) {
        assertThat(batched.get(s).get(i))
            .as("sequence %d, step %d, batched", s, i)
            .containsExactly(alone.get(i));
        assertThat(chunked.get(i))
            .as("sequence %d, step %d, chunked", s, i)
            .containsExactly(alone.get(i));
      }
    }
  }
}
