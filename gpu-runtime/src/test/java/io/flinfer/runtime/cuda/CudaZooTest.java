package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.kernel.ActivationRounding;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.ZooGoldens;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every family's zoo model on the device: the last prompt position's logits within 1e-2 (16-bit
 * weights, activations and KV) of the CPU backend's fp32, and a context of 32K positions.
 *
 * <p>llama-q-Q8_0 is held to 1.5e-2: its random weights amplify 16-bit rounding about three times
 * as much as the others' (on the CPU, fp16 KV alone moves its logits by 4.4e-3 against
 * llama3-tiny's 1.3e-3), and the device measured 1.03e-2 there.
 *
 * <p>The device multiplies 16-bit activations as they come, so the CPU reference takes them
 * unrounded too ({@code flinfer.activations=f32}): by default the CPU rounds a quantized product's
 * activations to 8 bits per block as ggml does, a difference of its own that this test does not
 * measure.
 */
class CudaZooTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "llama3-tiny, 1e-2",
    "qwen2-tiny, 1e-2",
    "qwen3-tiny, 1e-2",
    "phi3-tiny, 1e-2",
    "llama-q-Q8_0, 1.5e-2"
  })
  void logitsAgreeWithTheCpuBackend(String name, double bound) {
    CudaDevice.assume();
    LlamaModel model = unrounded(name);
    double worst = 0;
    for (int[] t : ZooGoldens.prompts(name)) {
      float[] cpu = ForwardRuns.alone(model, t, t.length, CpuModelRunner::new, 4).get(0);
      float[] gpu = ForwardRuns.alone(model, t, t.length, CudaModelRunner::new, 1).get(0);
      worst = Math.max(worst, CudaDevice.maxRel(cpu, gpu));
    }
    System.out.printf("%s: CUDA against CPU, max relative logit difference %.2e%n", name, worst);
    assertThat(worst).isLessThan(bound);
  }

  /** The model loaded with its products' activations unrounded on the CPU. */
  private static LlamaModel unrounded(String name) {
    String before = System.getProperty(ActivationRounding.PROPERTY);
    System.setProperty(ActivationRounding.PROPERTY, "f32");
    try {
      return ZooGoldens.model(name);
    } finally {
      if (before == null) {
        System.clearProperty(ActivationRounding.PROPERTY);
      } else {
        System.setProperty(ActivationRounding.PROPERTY, before);
      }
    }
  }

  /** qwen2-tiny declares 32K positions: prefill 32,760 in chunks, then decode to the end. */
  @Test
  void aContextOf32kPositionsWorks() {
    CudaDevice.assume();
    LlamaModel model = ZooGoldens.model("qwen2-tiny");
    int n = 32768;
    int prompt = n - 8;
    int[] tokens = new Random(1).ints(n, 3, 150000).toArray();
    List<float[]> gpu = ForwardRuns.chunked(model, tokens, prompt, 4096, CudaModelRunner::new, 1);
    List<float[]> cpu =
        ForwardRuns.chunked(
            model,
            tokens,
            prompt,
            4096,
            CpuModelRunner::new,
            Runtime.getRuntime().availableProcessors());
    double worst = 0;
    for (int i = 0; i < gpu.size(); i++) {
      worst = Math.max(worst, CudaDevice.maxRel(cpu.get(i), gpu.get(i)));
    }
    System.out.printf("qwen2-tiny at 32K positions: CUDA against CPU %.2e%n", worst);
    assertThat(worst).isLessThan(1e-2);
    // The last token again, in one extend with the seven before it: the same bits.
    List<float[]> again = ForwardRuns.chunked(model, tokens, n, 4096, CudaModelRunner::new, 1);
    assertThat(again.get(0)).containsExactly(gpu.get(gpu.size() - 1));
  }
}
