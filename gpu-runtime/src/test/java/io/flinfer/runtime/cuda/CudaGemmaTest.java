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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gemma 3's operations on the device (embedding scale, GeGLU, post norms, windowed layers with
 * their own rope) against the CPU backend, on a random-weight file in Gemma 3's layout whose
 * windows (8 positions, two layers in three) are shorter than a chunk of keys: tokens past the
 * window inside a chunk, whole chunks before it, and, past {@link StepPlan#SPLIT} positions, whole
 * flash-decoding splits before it. Needs a device; the kernels are used under {@link
 * CudaModelRunner#GEMMA_PROPERTY}.
 */
class CudaGemmaTest {
  private static final int WINDOW = 8;

  @TempDir static Path dir;

  @BeforeAll
  static void enable() {
    System.setProperty(CudaModelRunner.GEMMA_PROPERTY, "true");
  }

  @AfterAll
  static void disable() {
    System.clearProperty(CudaModelRunner.GEMMA_PROPERTY);
  }

  private static LlamaModel model() throws Exception {
    SlidingWindow window =
        new SlidingWindow(WINDOW, 3, new RopeConfig(RopeConfig.Style.NEOX, 1e4f, null));
    return ModelLoader.load(
        RandomGgufModel.write(
            GemmaShapes.tiny(6, window), GgmlType.F32, true, 3, dir.resolve("gemma.gguf")),
        null);
  }

  @Test
  void promptPastTheWindowAndDecodesAgreeWithTheCpuBackend() throws Exception {
    CudaDevice.assume();
    LlamaModel model = model();
    int[] tokens = new Random(7).ints(48, 3, model.config().vocabSize()).toArray();
    List<float[]> cpu = ForwardRuns.alone(model, tokens, 40, CpuModelRunner::new, 4);
    List<float[]> gpu = ForwardRuns.alone(model, tokens, 40, CudaModelRunner::new, 1);
    assertThat(gpu).hasSameSizeAs(cpu);
    double worst = 0;
    for (int i = 0; i < cpu.size(); i++) {
      worst = Math.max(worst, CudaDevice.maxRel(cpu.get(i), gpu.get(i)));
    }
    System.out.printf(
        "gemma layout, 40-token prompt and 8 decodes: CUDA against CPU %.2e%n", worst);
    assertThat(worst).isLessThan(1e-2);
  }

  @Test
  void decodesWhoseFirstSplitsLieBeforeTheWindowAgreeWithTheCpuBackend() throws Exception {
    CudaDevice.assume();
    LlamaModel model = model();
    int n = 3 * StepPlan.SPLIT + 24;
    int[] tokens = new Random(11).ints(n, 3, model.config().vocabSize()).toArray();
    int prompt = n - 8;
    List<float[]> cpu = ForwardRuns.chunked(model, tokens, prompt, 64, CpuModelRunner::new, 4);
    List<float[]> gpu = ForwardRuns.chunked(model, tokens, prompt, 64, CudaModelRunner::new, 1);
    double worst = 0;
    for (int i = 0; i < cpu.size(); i++) {
      worst = Math.max(worst, CudaDevice.maxRel(cpu.get(i), gpu.get(i)));
    }
    System.out.printf("gemma layout at %d positions: CUDA against CPU %.2e%n", n, worst);
    assertThat(worst).isLessThan(1e-2);
  }
}
