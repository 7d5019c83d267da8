package io.flinfer.runtime.zoo;

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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What a compact KV store costs in accuracy: logits with 16-bit and FP8 KV (scale 1) against fp32
 * KV, at the last prompt position and over a 32-token greedy continuation (the golden one), on the
 * zoo's models and stories260K. Prints the figures the README quotes; fails past bounds a little
 * above them (the kernels' exactness is {@code KvVectorsTest}'s and {@code TokenAttentionTest}'s).
 */
class KvStoreAccuracyTest {
  private static ModelRunnerFactory with(KvStoreType type) {
    return new ModelRunnerFactory() {
      @Override
      public ModelRunner create(LlamaModel model, ReqToTokenPool reqToToken, int threads) {
        return new CpuModelRunner(model, reqToToken, threads);
      }

      @Override
      public ModelRunner createWithKv(
          LlamaModel model, ReqToTokenPool reqToToken, int threads, int size) {
        ModelRunner r = create(model, reqToToken, threads);
        r.allocateKv(size, 1, type);
        return r;
      }
    };
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({
    "stories260K, FP16, 0.002",
    "stories260K, FP8_E4M3, 0.15",
    "stories260K, FP8_E5M2, 0.3",
    "llama3-tiny, FP8_E4M3, 0.3",
    "llama3-tiny, FP8_E5M2, 0.7",
    "qwen2-tiny, FP8_E4M3, 0.3",
    "qwen2-tiny, FP8_E5M2, 0.7",
    "qwen3-tiny, FP8_E4M3, 0.1",
    "qwen3-tiny, FP8_E5M2, 0.2",
    "phi3-tiny, FP8_E4M3, 0.3",
    "phi3-tiny, FP8_E5M2, 0.7"
  })
  void compactKvStaysCloseToFp32(String name, KvStoreType type, double bound) {
    LlamaModel model =
        name.equals("stories260K") ? SharedFiles.stories260k() : ZooGoldens.model(name);
    int[] tokens;
    int promptLen;
    if (name.equals("stories260K")) {
      tokens = SharedFiles.goldenIds();
      promptLen = 1;
    } else {
      ZooGoldens.Golden g = ZooGoldens.goldens(name).get(0);
      tokens = new int[g.prompt().length + g.greedy().length - 1];
      System.arraycopy(g.prompt(), 0, tokens, 0, g.prompt().length);
      System.arraycopy(g.greedy(), 0, tokens, g.prompt().length, g.greedy().length - 1);
      promptLen = g.prompt().length;
    }
    List<float[]> exact = ForwardRuns.alone(model, tokens, promptLen, with(KvStoreType.FP32), 1);
    List<float[]> compact = ForwardRuns.alone(model, tokens, promptLen, with(type), 1);
    double worst = 0;
    int sameTop = 0;
    for (int i = 0; i < exact.size(); i++) {
      worst = Math.max(worst, ZooGoldens.maxRel(exact.get(i), compact.get(i)));
      sameTop += ZooQuantTest.argmax(exact.get(i)) == ZooQuantTest.argmax(compact.get(i)) ? 1 : 0;
    }
    System.out.printf(
        "KV %s on %s: max_rel %.2e over %d positions, top-1 equal at %d of them%n",
        type, name, worst, exact.size(), sameTop);
    assertThat(worst).isLessThanOrEqualTo(bound);
    // The random-weight models' top two logits are often within a few percent; still, most
    // positions keep their greedy token.
    assertThat(sameTop).isGreaterThan(exact.size() / 2);
  }
}
