package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.gguf.RandomGgufModel;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.GemmaShapes;
import io.flinfer.runtime.testing.LlamaCppGoldens;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gemma 1's forward pass (the embedding scaled by sqrt(dim), GeGLU, no post norms, windows or caps)
 * on a random-weight file: against llama.cpp, the scalar reference and the determinism rule.
 */
class Gemma1ForwardTest {
  @TempDir static Path dir;

  private static LlamaModel model() throws Exception {
    Path file = dir.resolve("gemma.gguf");
    return ModelLoader.load(
        RandomGgufModel.write(GemmaShapes.gemma1(4), GgmlType.F32, true, 3, file), null);
  }

  @Test
  void theFileLoadsAsTheShapeItWasWrittenIn() throws Exception {
    ModelConfig loaded = model().config();
    assertThat(loaded).isEqualTo(GemmaShapes.gemma1(4));
    assertThat(loaded.postNorms()).isFalse();
  }

  /**
   * llama.cpp (c392e50) on the same file, written again from its seed ({@code resources/gemma}).
   */
  @Test
  void matchesLlamaCpp() throws Exception {
    LlamaCppGoldens.assertMatches(model(), "gemma", "gm", 1e-3);
  }

  @Test
  void agreesWithTheScalarReferenceAndTheDeterminismRule() throws Exception {
    LlamaModel model = model();
    int[] tokens = new Random(7).ints(30, 3, model.config().vocabSize()).toArray();
    ForwardRuns.assertAgreesWithTheReference(model, tokens, 12, CpuModelRunner::new, 1e-4);
    ForwardRuns.assertMixedAndChunkedGiveAloneBits(
        model, new Random(42), 5, 600, CpuModelRunner::new);
  }
}
