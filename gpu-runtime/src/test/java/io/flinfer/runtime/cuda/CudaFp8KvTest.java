package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.forward.ModelRunner;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.testing.ZooGoldens;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The CUDA backend with an FP8 KV cache: its logits are as far from the CPU backend's fp32-cache
 * logits as the CPU backend's own FP8 cache puts them (the codes are the same rounding of slightly
 * different values), and a request's logits keep their bits however it is batched, chunked or split
 * across flash-decoding blocks. Device only.
 */
class CudaFp8KvTest {
  private static final ModelRunnerFactory CUDA = CudaModelRunner::new;

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({
    "stories260K, FP8_E4M3",
    "stories260K, FP8_E5M2",
    "qwen3-tiny, FP8_E4M3",
    "qwen3-tiny, FP8_E5M2"
  })
  void theCacheIsAsAccurateAsTheCpuBackendsOwn(String name, KvStoreType kv) {
    CudaDevice.assume();
    LlamaModel model =
        name.equals("stories260K") ? SharedFiles.stories260k() : ZooGoldens.model(name);
    int[] tokens = new Random(4).ints(160, 3, model.config().vocabSize()).toArray();
    int prompt = 96; // past one flash-decoding split of 64 positions
    List<float[]> exact = ForwardRuns.alone(model, tokens, prompt, CpuModelRunner::new, 2);
    List<float[]> cpu =
        ForwardRuns.alone(model, tokens, prompt, withKv(CpuModelRunner::new, kv), 2);
    List<float[]> gpu = ForwardRuns.alone(model, tokens, prompt, withKv(CUDA, kv), 1);
    double cpuError = 0;
    double gpuError = 0;
    double between = 0;
    int sameTop = 0;
    for (int i = 0; i < exact.size(); i++) {
      cpuError = Math.max(cpuError, CudaDevice.maxRel(exact.get(i), cpu.get(i)));
      gpuError = Math.max(gpuError, CudaDevice.maxRel(exact.get(i), gpu.get(i)));
      between = Math.max(between, CudaDevice.maxRel(cpu.get(i), gpu.get(i)));
      sameTop += ZooGoldens.argmax(cpu.get(i)) == ZooGoldens.argmax(gpu.get(i)) ? 1 : 0;
    }
    System.out.printf(
        "%s %s: against fp32 KV on the CPU, CPU %.3e, CUDA %.3e; CUDA against CPU %.3e; top-1"
            + " equal %d/%d%n",
        name, kv, cpuError, gpuError, between, sameTop, exact.size());
    // The device rounds values a 16-bit pass made, the CPU fp32 ones: where the two fall either
    // side of an FP8 midpoint their codes differ by a step, so the bound leaves room for that,
    // while
    // a cache read or written wrong would be off by the logits' whole scale.
    assertThat(gpuError).isLessThan(2 * cpuError + 1e-2);
    // And the top token mostly agrees with the CPU's FP8 cache (61 to 65 of 65 on an H200).
    assertThat(sameTop).isGreaterThanOrEqualTo((int) Math.ceil(0.9 * exact.size()));
  }

  @Test
  void aRequestKeepsItsBitsBatchedChunkedAndSplit() {
    CudaDevice.assume();
    LlamaModel model = SharedFiles.stories260k();
    ModelRunnerFactory fp8 = withKv(CUDA, KvStoreType.FP8_E4M3);
    CudaBackendTest.assertBatchInvariance(model, fp8);
    int[] long_ = new Random(9).ints(600, 3, model.config().vocabSize()).toArray();
    List<float[]> decoded = ForwardRuns.alone(model, long_, 100, fp8, 1);
    for (int prompt : new int[] {257, 513}) {
      List<float[]> extended = ForwardRuns.chunked(model, long_, prompt, 200, fp8, 1);
      assertThat(extended.get(0))
          .as("position %d", prompt - 1)
          .containsExactly(decoded.get(prompt - 100));
    }
  }

  /** {@code factory}'s runners with a KV cache of {@code kv}. */
  static ModelRunnerFactory withKv(ModelRunnerFactory factory, KvStoreType kv) {
    return new ModelRunnerFactory() {
      @Override
      public ModelRunner create(LlamaModel model, ReqToTokenPool reqToToken, int threads) {
        return factory.create(model, reqToToken, threads);
      }

      @Override
      public ModelRunner createWithKv(
          LlamaModel model, ReqToTokenPool reqToToken, int threads, int size) {
        return createWithKv(model, reqToToken, threads, size, kv);
      }
    };
  }
}
