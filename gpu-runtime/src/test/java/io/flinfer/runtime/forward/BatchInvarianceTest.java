package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.testing.ZooGoldens;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A sequence's logits are the same bits whatever shares its batch, however its prompt is chunked,
 * wherever its KV slots lie in the pool and however many threads run the step; and they agree with
 * the scalar reference forward pass.
 */
class BatchInvarianceTest {
  private static final int SEQUENCES = 6;

  /**
   * The zoo's quantized files as well: their products round each token's activations on their own
   * (8 bits a block, as ggml does), shared between the row ranges and threads of one product.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"stories260K", "llama-q-Q8_0", "llama-q-Q4_0", "llama-q-Q4_K_M"})
  void mixedBatchesGiveEachSequenceItsAloneLogitsBitForBit(String name) {
    LlamaModel model =
        name.equals("stories260K") ? SharedFiles.stories260k() : ZooGoldens.model(name);
    Random rnd = new Random(42);
    int vocab = model.config().vocabSize();
    int[][] tokens = new int[SEQUENCES][];
    int[] promptLen = new int[SEQUENCES];
    for (int s = 0; s < SEQUENCES; s++) {
      tokens[s] = rnd.ints(8 + rnd.nextInt(60), 3, vocab).toArray();
      promptLen[s] = 2 + rnd.nextInt(tokens[s].length - 4);
    }
    List<List<float[]>> alone = new ArrayList<>();
    for (int s = 0; s < SEQUENCES; s++) {
      alone.add(ForwardRuns.alone(model, tokens[s], promptLen[s], CpuModelRunner::new, 1));
    }
    List<List<float[]>> batched =
        ForwardRuns.mixed(model, tokens, promptLen, rnd, CpuModelRunner::new, 2);
    for (int s = 0; s < SEQUENCES; s++) {
      assertThat(batched.get(s)).hasSameSizeAs(alone.get(s));
      for (int i = 0; i < alone.get(s).size(); i++) {
        assertThat(bits(batched.get(s).get(i)))
            .as("sequence %d, step %d", s, i)
            .isEqualTo(bits(alone.get(s).get(i)));
      }
    }
  }

  @Test
  void decodesSharingACachedPrefixGiveEachSequenceItsAloneLogitsBitForBit() {
    // Eight sequences behind one 48-token prefix held once: their decodes attend it in
    // shared-prefix tiles (four requests of a GQA group of two per tile).
    LlamaModel model = SharedFiles.stories260k();
    Random rnd = new Random(11);
    int vocab = model.config().vocabSize();
    int prefix = 48;
    int n = 8;
    int[] shared = rnd.ints(prefix, 3, vocab).toArray();
    int[][] tokens = new int[n][];
    int[] promptLen = new int[n];
    for (int s = 0; s < n; s++) {
      int own = 2 + rnd.nextInt(10);
      int decode = 3 + rnd.nextInt(12);
      tokens[s] = new int[prefix + own + decode];
      System.arraycopy(shared, 0, tokens[s], 0, prefix);
      for (int i = prefix; i < tokens[s].length; i++) {
        tokens[s][i] = 3 + rnd.nextInt(vocab - 3);
      }
      promptLen[s] = prefix + own;
    }
    for (int threads : new int[] {1, 2}) {
      List<List<float[]>> together =
          ForwardRuns.sharedPrefix(model, prefix, tokens, promptLen, CpuModelRunner::new, threads);
      for (int s = 0; s < n; s++) {
        List<float[]> alone =
            ForwardRuns.alone(model, tokens[s], promptLen[s], CpuModelRunner::new, 1);
        assertThat(together.get(s)).hasSameSizeAs(alone);
        for (int i = 0; i < alone.size(); i++) {
          assertThat(bits(together.get(s).get(i)))
              .as("%d threads, sequence %d, step %d", threads, s, i)
              .isEqualTo(bits(alone.get(i)));
        }
      }
    }
  }

  @Test
  void fastForwardAgreesWithTheScalarReference() {
    LlamaModel model = SharedFiles.stories260k();
    int[] tokens = new Random(7).ints(40, 3, model.config().vocabSize()).toArray();
    List<float[]> fast = ForwardRuns.alone(model, tokens, 1, CpuModelRunner::new, 1);
    ReferenceForward ref = new ReferenceForward(model);
    for (int i = 0; i < tokens.length; i++) {
      float[] expected = ref.next(tokens[i]);
      float[] actual = fast.get(i);
      float scale = 0f;
      float maxDiff = 0f;
      for (int j = 0; j < expected.length; j++) {
        scale = Math.max(scale, Math.abs(expected[j]));
        maxDiff = Math.max(maxDiff, Math.abs(expected[j] - actual[j]));
      }
      assertThat(maxDiff / scale).as("position %d", i).isLessThan(1e-4f);
    }
  }

  static int[] bits(float[] v) {
    int[] b = new int[v.length];
    for (int i = 0; i < v.length; i++) {
      b[i] = Float.floatToRawIntBits(v[i]);
    }
    return b;
  }
}
