package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.forward.ModelRunners;
import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.generate.GenerationRequest;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The CUDA backend against the CPU backend on stories260K. Tests that need a device are skipped,
 * with the probe's reason, where there is none.
 */
class CudaBackendTest {

  private static void assumeDevice() {
    assumeTrue(
        CudaProbe.available(),
        () -> "needs a CUDA device: " + CudaProbe.unavailableReason().orElse(""));
  }

  @Test
  void withoutADeviceTheProbeSaysWhyAndAutoFallsBackToTheCpu() {
    assumeTrue(!CudaProbe.available(), "a CUDA device is present");
    assertThat(CudaProbe.unavailableReason()).get().asString().isNotBlank();
    assertThatThrownBy(() -> ModelRunners.byName("cuda"))
        .hasMessageContaining("backend cuda is not available");
    LlamaModel model = SharedFiles.stories260k();
    try (var runner =
        ModelRunners.byName("auto").createWithKv(model, new ReqToTokenPool(1, 8), 1, 8)) {
      assertThat(runner.backendName()).isEqualTo("cpu");
    }
  }

  @Test
  void greedyGenerationGivesTheGoldenTokens() {
    assumeDevice();
    LlamaModel model = SharedFiles.stories260k();
    int[] prompt = model.tokenizer().encode("Once upon a time", true);
    try (BatchGenerator g = new BatchGenerator(model, 1, 512, 1, CudaModelRunner::new)) {
      int[] out =
          g.generate(
                  List.of(new GenerationRequest(prompt, SamplingParams.GREEDY, 64, true)),
                  (r, i, t, lp) -> {})[0];
      assertThat(out).containsExactly(SharedFiles.goldenIds());
    }
  }

  @Test
  void logitsAgreeWithTheCpuBackend() {
    assumeDevice();
    LlamaModel model = SharedFiles.stories260k();
    int[] tokens = new Random(5).ints(48, 3, model.config().vocabSize()).toArray();
    List<float[]> cpu = ForwardRuns.alone(model, tokens, 12, CpuModelRunner::new, 1);
    List<float[]> gpu = ForwardRuns.alone(model, tokens, 12, CudaModelRunner::new, 1);
    for (int step = 0; step < cpu.size(); step++) {
      float scale = 0;
      float err = 0;
      for (int i = 0; i < cpu.get(step).length; i++) {
        scale = Math.max(scale, Math.abs(cpu.get(step)[i]));
        err = Math.max(err, Math.abs(cpu.get(step)[i] - gpu.get(step)[i]));
      }
      assertThat(err / scale).as("step %d", step).isLessThan(1e-4f);
    }
  }

  @Test
  void batchInvarianceHoldsBitForBitOnTheDevice() {
    assumeDevice();
    LlamaModel model = SharedFiles.stories260k();
    Random rnd = new Random(42);
    int[][] tokens = new int[6][];
    int[] promptLen = new int[6];
    for (int s = 0; s < 6; s++) {
      tokens[s] = rnd.ints(8 + rnd.nextInt(60), 3, model.config().vocabSize()).toArray();
      promptLen[s] = 2 + rnd.nextInt(tokens[s].length - 4);
    }
    List<List<float[]>> mixed =
        ForwardRuns.mixed(model, tokens, promptLen, rnd, CudaModelRunner::new, 1);
    for (int s = 0; s < 6; s++) {
      List<float[]> alone =
          ForwardRuns.alone(model, tokens[s], promptLen[s], CudaModelRunner::new, 1);
      assertThat(mixed.get(s)).hasSameSizeAs(alone);
      for (int i = 0; i < alone.size(); i++) {
        assertThat(mixed.get(s).get(i))
            .as("sequence %d step %d", s, i)
            .containsExactly(alone.get(i));
      }
    }
  }
}
