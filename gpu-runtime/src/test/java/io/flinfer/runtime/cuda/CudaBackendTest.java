package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.forward.ModelRunners;
import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.generate.GenerationRequest;
import io.flinfer.runtime.gguf.RandomGgufModel;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CUDA backend on stories260K: the golden tokens, the CPU backend's logits within 16-bit
 * rounding, and a request's logits the same bits however it is batched, chunked or split across
 * flash-decoding blocks, with graphs or without. Device tests skip with the probe's reason where
 * there is no device.
 */
class CudaBackendTest {
  private static final ModelRunnerFactory CUDA = CudaModelRunner::new;

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
    CudaDevice.assume();
    LlamaModel model = SharedFiles.stories260k();
    int[] prompt = model.tokenizer().encode("Once upon a time", true);
    try (BatchGenerator g = new BatchGenerator(model, 1, 512, 1, CUDA)) {
      int[] out =
          g.generate(
                  List.of(new GenerationRequest(prompt, SamplingParams.GREEDY, 64, true)),
                  (r, i, t, lp) -> {})[0];
      assertThat(out).containsExactly(SharedFiles.goldenIds());
    }
  }

  @Test
  void logitsAgreeWithTheCpuBackendWithin16BitRounding() {
    CudaDevice.assume();
    LlamaModel model = SharedFiles.stories260k();
    int[] tokens = new Random(5).ints(300, 3, model.config().vocabSize()).toArray();
    List<float[]> cpu = ForwardRuns.alone(model, tokens, 200, CpuModelRunner::new, 1);
    List<float[]> gpu = ForwardRuns.alone(model, tokens, 200, CUDA, 1);
    double worst = 0;
    for (int step = 0; step < cpu.size(); step++) {
      worst = Math.max(worst, CudaDevice.maxRel(cpu.get(step), gpu.get(step)));
    }
    System.out.printf("stories260K: CUDA against CPU, max relative logit difference %.2e%n", worst);
    assertThat(worst).isLessThan(1e-2);
  }

  @Test
  void batchInvarianceHoldsBitForBit() {
    CudaDevice.assume();
    assertBatchInvariance(SharedFiles.stories260k(), CUDA);
  }

  /** Six sequences batched with one another, chunked and staggered, give their alone bits. */
  static void assertBatchInvariance(LlamaModel model, ModelRunnerFactory backend) {
    Random rnd = new Random(42);
    int[][] tokens = new int[6][];
    int[] promptLen = new int[6];
    for (int s = 0; s < 6; s++) {
      tokens[s] = rnd.ints(8 + rnd.nextInt(400), 3, model.config().vocabSize()).toArray();
      promptLen[s] = 2 + rnd.nextInt(tokens[s].length - 4);
    }
    List<List<float[]>> mixed = ForwardRuns.mixed(model, tokens, promptLen, rnd, backend, 1);
    for (int s = 0; s < 6; s++) {
      List<float[]> alone = ForwardRuns.alone(model, tokens[s], promptLen[s], backend, 1);
      assertThat(mixed.get(s)).hasSameSizeAs(alone);
      for (int i = 0; i < alone.size(); i++) {
        assertThat(mixed.get(s).get(i))
            .as("sequence %d step %d", s, i)
            .containsExactly(alone.get(i));
      }
    }
  }

  /**
   * Decoding past {@link StepPlan#SPLIT} positions splits the context across blocks
   * (flash-decoding) and merges the splits; an extend covering the same positions loops over them
   * in one block. A restored request is prefilled again, so both must give the same bits.
   */
  @Test
  void aTokenDecodedAcrossSplitsEqualsTheSameTokenInAnExtend() {
    CudaDevice.assume();
    LlamaModel model = SharedFiles.stories260k();
    int[] tokens = new Random(9).ints(600, 3, model.config().vocabSize()).toArray();
    List<float[]> decoded = ForwardRuns.alone(model, tokens, 100, CUDA, 1);
    for (int prompt : new int[] {257, 300, 513, 600}) {
      List<float[]> extended = ForwardRuns.chunked(model, tokens, prompt, 200, CUDA, 1);
      assertThat(extended.get(0))
          .as("position %d", prompt - 1)
          .containsExactly(decoded.get(prompt - 100));
    }
  }

  /** Seventy decodes take the large-tile kernels; alone, a request takes the few-token ones. */
  @Test
  void aWideDecodeBatchGivesEachRequestItsAloneBits() {
    CudaDevice.assume();
    LlamaModel model = SharedFiles.stories260k();
    Random rnd = new Random(3);
    int n = 70;
    int[][] tokens = new int[n][];
    int[] promptLen = new int[n];
    for (int s = 0; s < n; s++) {
      tokens[s] = rnd.ints(40, 3, model.config().vocabSize()).toArray();
      promptLen[s] = 30;
    }
    List<List<float[]>> together = ForwardRuns.lockstep(model, tokens, promptLen, CUDA, 1);
    for (int s = 0; s < n; s += 9) {
      List<float[]> alone = ForwardRuns.alone(model, tokens[s], promptLen[s], CUDA, 1);
      for (int i = 0; i < alone.size(); i++) {
        assertThat(together.get(s).get(i))
            .as("sequence %d step %d", s, i)
            .containsExactly(alone.get(i));
      }
    }
  }

  /**
   * Every one-to-eight-token product kernel, with split-K sums finished by a separate kernel or by
   * each tile's last split, gives the default's bits. The random model's matrices are split (768
   * and 2112 columns) into ranges that end inside a k tile of the wider kernels, and its prompt
   * takes the large tiles.
   */
  @Test
  void everyProductKernelAndSplitFinishGiveTheSameBits(@TempDir Path dir) throws Exception {
    CudaDevice.assume();
    ModelConfig shape = new ModelConfig(768, 2112, 2, 12, 4, 512, 1024, 10000f, 1e-5f);
    LlamaModel model =
        ModelLoader.load(
            RandomGgufModel.write(shape, GgmlType.BF16, true, 3, dir.resolve("m.gguf")), null);
    int[] tokens = new Random(13).ints(180, 3, shape.vocabSize()).toArray();
    List<float[]> reference = ForwardRuns.alone(model, tokens, 150, CUDA, 1);
    // Every one-to-eight-token and every large variant (the 150-token extend's), in pairs.
    List<String> few = GemmShape.FEW_TOKEN_VARIANTS;
    List<String> large = GemmShape.LARGE_VARIANTS;
    for (int v = 0; v < Math.max(few.size(), large.size()); v++) {
      String variant = few.get(v % few.size());
      String largeVariant = large.get(v % large.size());
      for (String fused : new String[] {"false", "true"}) {
        System.setProperty("flinfer.cuda.gemv", variant);
        System.setProperty("flinfer.cuda.gemm", largeVariant);
        System.setProperty("flinfer.cuda.fusedReduce", fused);
        List<float[]> other;
        try {
          try (CudaModelRunner r = new CudaModelRunner(model, new ReqToTokenPool(1, 8), 1)) {
            assertThat(r.productKernels())
                .isEqualTo(
                    variant
                        + ", "
                        + largeVariant
                        + ("true".equals(fused) ? ", fused" : ", separate")
                        + " finish");
          }
          other = ForwardRuns.alone(model, tokens, 150, CUDA, 1);
        } finally {
          System.clearProperty("flinfer.cuda.gemv");
          System.clearProperty("flinfer.cuda.gemm");
          System.clearProperty("flinfer.cuda.fusedReduce");
        }
        assertThat(other).hasSameSizeAs(reference);
        for (int i = 0; i < reference.size(); i++) {
          assertThat(other.get(i))
              .as("%s, %s, fused reduce %s, step %d", variant, largeVariant, fused, i)
              .containsExactly(reference.get(i));
        }
      }
    }
  }

  /**
   * A Qwen2-style shape (q/k/v biases) whose q/k/v, output and down products are split and whose
   * gate/up product is not, so every fusion applies: alone (a 150-token extend, then decode) and in
   * a lockstep batch of 12, the fused kernels give the separate kernels' bits.
   */
  @Test
  void fusedKernelsGiveTheBitsOfSeparateOnes(@TempDir Path dir) throws Exception {
    CudaDevice.assume();
    ModelConfig shape =
        new ModelConfig(
            "qwen2",
            768,
            8256,
            2,
            12,
            4,
            64,
            512,
            1024,
            1e-6f,
            RopeConfig.normal(1e6f),
            true,
            false);
    LlamaModel model =
        ModelLoader.load(
            RandomGgufModel.write(shape, GgmlType.BF16, true, 5, dir.resolve("q.gguf")), null);
    try (CudaModelRunner r = new CudaModelRunner(model, new ReqToTokenPool(1, 8), 1)) {
      assertThat(r.fusions()).isEqualTo(new Fusions(true, true, true, true));
    }
    Random rnd = new Random(17);
    int[] tokens = rnd.ints(180, 3, shape.vocabSize()).toArray();
    int n = 12;
    int[][] batch = new int[n][];
    int[] promptLen = new int[n];
    for (int s = 0; s < n; s++) {
      batch[s] = rnd.ints(90, 3, shape.vocabSize()).toArray();
      promptLen[s] = 40 + 3 * s;
    }
    List<float[]> fused = ForwardRuns.alone(model, tokens, 150, CUDA, 1);
    List<List<float[]>> fusedBatch = ForwardRuns.lockstep(model, batch, promptLen, CUDA, 1);
    List<float[]> separate;
    List<List<float[]>> separateBatch;
    System.setProperty("flinfer.cuda.fuse", "false");
    try {
      try (CudaModelRunner r = new CudaModelRunner(model, new ReqToTokenPool(1, 8), 1)) {
        assertThat(r.fusions()).isEqualTo(Fusions.NONE);
      }
      separate = ForwardRuns.alone(model, tokens, 150, CUDA, 1);
      separateBatch = ForwardRuns.lockstep(model, batch, promptLen, CUDA, 1);
    } finally {
      System.clearProperty("flinfer.cuda.fuse");
    }
    assertThat(fused).hasSameSizeAs(separate);
    for (int i = 0; i < fused.size(); i++) {
      assertThat(fused.get(i)).as("alone, step %d", i).containsExactly(separate.get(i));
    }
    for (int s = 0; s < n; s++) {
      assertThat(fusedBatch.get(s)).hasSameSizeAs(separateBatch.get(s));
      for (int i = 0; i < fusedBatch.get(s).size(); i++) {
        assertThat(fusedBatch.get(s).get(i))
            .as("request %d, step %d", s, i)
            .containsExactly(separateBatch.get(s).get(i));
      }
    }
  }

  @Test
  void graphsGiveTheBitsOfDirectLaunches() {
    CudaDevice.assume();
    LlamaModel model = SharedFiles.stories260k();
    Random rnd = new Random(11);
    int n = 12;
    int[][] tokens = new int[n][];
    int[] promptLen = new int[n];
    for (int s = 0; s < n; s++) {
      tokens[s] = rnd.ints(60, 3, model.config().vocabSize()).toArray();
      promptLen[s] = 20 + s;
    }
    List<List<float[]>> graphs = ForwardRuns.lockstep(model, tokens, promptLen, CUDA, 1);
    List<List<float[]>> direct;
    System.setProperty("flinfer.cuda.graphs", "false");
    try {
      direct = ForwardRuns.lockstep(model, tokens, promptLen, CUDA, 1);
    } finally {
      System.clearProperty("flinfer.cuda.graphs");
    }
    List<float[]> a = new ArrayList<>();
    List<float[]> b = new ArrayList<>();
    graphs.forEach(a::addAll);
    direct.forEach(b::addAll);
    assertThat(a).hasSameSizeAs(b);
    for (int i = 0; i < a.size(); i++) {
      assertThat(a.get(i)).as("row %d", i).containsExactly(b.get(i));
    }
  }
}
