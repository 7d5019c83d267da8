package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.runtime.cuda.CudaModelRunner;
import io.flinfer.runtime.gguf.RandomGgufModel;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelFormatException;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.model.Multipliers;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.LlamaCppGoldens;
import io.flinfer.runtime.testing.TinyShapes;
import io.flinfer.runtime.testing.ZooGoldens;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Granite's forward pass (Llama's, with an embedding multiplier, its own attention scale, a
 * multiplier on each block's output and a divisor of the logits) on random-weight files: against
 * llama.cpp, against the scalar reference, and under the determinism rule.
 */
class GraniteForwardTest {
  @TempDir static Path dir;

  private static final Multipliers MULTIPLIERS = new Multipliers(0.5f, 0.5f, 2f);

  private static ModelConfig shape() {
    return TinyShapes.granite(4, 2f, MULTIPLIERS);
  }

  private static LlamaModel load(ModelConfig c, String file) throws Exception {
    return ModelLoader.load(
        RandomGgufModel.write(c, GgmlType.F32, true, 3, dir.resolve(file)), null);
  }

  @Test
  void theFileLoadsAsTheShapeItWasWrittenIn() throws Exception {
    LlamaModel model = load(shape(), "granite.gguf");
    assertThat(model.config()).isEqualTo(shape());
    assertThat(model.config().attentionScale()).isEqualTo(0.5f);
    assertThat(CudaModelRunner.unsupported(model.config()))
        .hasValueSatisfying(why -> assertThat(why).contains("multipliers"));
  }

  /**
   * llama.cpp (c392e50) on the same file, written again here from its seed: its last-position
   * logits on a 6- and a 20-token prompt and its greedy steps ({@code resources/granite}).
   */
  @Test
  void matchesLlamaCpp() throws Exception {
    LlamaCppGoldens.assertMatches(load(shape(), "granite.gguf"), "granite", "gr", 1e-3);
  }

  @Test
  void cpuBackendAgreesWithTheScalarReference() throws Exception {
    LlamaModel model = load(shape(), "granite.gguf");
    int[] tokens = new Random(7).ints(30, 3, model.config().vocabSize()).toArray();
    ForwardRuns.assertAgreesWithTheReference(model, tokens, 12, CpuModelRunner::new, 1e-4);
  }

  /** Each multiplier changes the logits: the same weights as plain Llama give others. */
  @Test
  void theMultipliersChangeTheLogits() throws Exception {
    LlamaModel granite = load(shape(), "granite.gguf");
    LlamaModel llama =
        load(TinyShapes.llama(4).toBuilder().embeddingScale(2f).build(), "llama.gguf");
    int[] tokens = new Random(3).ints(12, 3, 600).toArray();
    float[] a = ForwardRuns.alone(granite, tokens, 12, CpuModelRunner::new, 1).get(0);
    float[] b = ForwardRuns.alone(llama, tokens, 12, CpuModelRunner::new, 1).get(0);
    assertThat(ZooGoldens.maxRel(b, a)).isGreaterThan(1e-2);
  }

  @Test
  void mixedBatchesAndChunksGiveEachSequenceItsAloneBits() throws Exception {
    ForwardRuns.assertMixedAndChunkedGiveAloneBits(
        load(shape(), "granite.gguf"), new Random(42), 5, 600, CpuModelRunner::new);
  }

  /** llama.cpp refuses a Granite file without its multipliers; so does Flinfer, naming the key. */
  @Test
  void aMissingMultiplierIsALoadError() throws Exception {
    ModelConfig bare = TinyShapes.llama(2).toBuilder().architecture("granite").build();
    Path file = RandomGgufModel.write(bare, GgmlType.F32, true, 3, dir.resolve("bare.gguf"));
    assertThatThrownBy(() -> ModelLoader.load(file, null))
        .isInstanceOf(ModelFormatException.class)
        .hasMessageContaining("granite.embedding_scale");
  }
}
