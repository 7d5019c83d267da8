package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.gguf.RandomGgufModel;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.model.SlidingWindow;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.GemmaShapes;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Gemma 3's operations on the device (embedding scale, GeGLU, post norms, windowed layers with
 * their own rope) against the CPU backend, on a random-weight file in Gemma 3's layout whose
 * windows (8 positions, two layers in three) are shorter than a chunk of keys: tokens past the
 * window inside a chunk, whole chunks before it, and, past {@link StepPlan#SPLIT} positions, whole
 * flash-decoding splits before it; with heads of 32 over two KV heads, and with Gemma 3 1B's heads
 * of 256 over one KV head (wider than the model). Needs a device.
 */
class CudaGemmaTest {
  private static final int WINDOW = 8;

  @TempDir static Path dir;

  private static LlamaModel model(int headDim, int kvHeads) throws Exception {
    SlidingWindow window =
        new SlidingWindow(WINDOW, 3, new RopeConfig(RopeConfig.Style.NEOX, 1e4f, null));
    return ModelLoader.load(
        RandomGgufModel.write(
            GemmaShapes.tiny(6, window, kvHeads, headDim),
            GgmlType.F32,
            true,
            3,
            dir.resolve("gemma-" + headDim + ".gguf")),
        null);
  }

  @ParameterizedTest(name = "heads of {0} over {1} KV heads")
  @CsvSource({"32, 2", "256, 1"})
  void promptPastTheWindowAndDecodesAgreeWithTheCpuBackend(int headDim, int kvHeads)
      throws Exception {
    CudaDevice.assume();
    LlamaModel model = model(headDim, kvHeads);
    int[] tokens = new Random(7).ints(48, 3, model.config().vocabSize()).toArray();
    List<float[]> cpu = ForwardRuns.alone(model, tokens, 40, CpuModelRunner::new, 4);
    List<float[]> gpu = ForwardRuns.alone(model, tokens, 40, CudaModelRunner::new, 1);
    assertThat(gpu).hasSameSizeAs(cpu);
    double worst = 0;
    for (int i = 0; i < cpu.size(); i++) {
      worst = Math.max(worst, CudaDevice.maxRel(cpu.get(i), gpu.get(i)));
    }
    System.out.printf(
        "gemma layout, heads of %d, 40-token prompt and 8 decodes: CUDA against CPU %.2e%n",
        headDim, worst);
    assertThat(worst).isLessThan(1e-2);
  }

  @ParameterizedTest(name = "heads of {0} over {1} KV heads")
  @CsvSource({"32, 2", "256, 1"})
  void decodesWhoseFirstSplitsLieBeforeTheWindowAgreeWithTheCpuBackend(int headDim, int kvHeads)
      throws Exception {
    CudaDevice.assume();
    LlamaModel model = model(headDim, kvHeads);
    int n = 3 * StepPlan.SPLIT + 24;
    int[] tokens = new Random(11).ints(n, 3, model.config().vocabSize()).toArray();
    int prompt = n - 8;
    List<float[]> cpu = ForwardRuns.chunked(model, tokens, prompt, 64, CpuModelRunner::new, 4);
    List<float[]> gpu = ForwardRuns.chunked(model, tokens, prompt, 64, CudaModelRunner::new, 1);
    double worst = 0;
    for (int i = 0; i < cpu.size(); i++) {
      worst = Math.max(worst, CudaDevice.maxRel(cpu.get(i), gpu.get(i)));
    }
    System.out.printf(
        "gemma layout, heads of %d, at %d positions: CUDA against CPU %.2e%n", headDim, n, worst);
    assertThat(worst).isLessThan(1e-2);
  }
}
