package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A sequence's logits are the same bits whatever shares its batch, however its prompt is chunked,
 * wherever its KV slots lie in the pool and however many threads run the step; and they agree with
 * the scalar reference forward pass.
 */
class BatchInvarianceTest {
  private static final int SEQUENCES = 6;

  @Test
  void mixedBatchesGiveEachSequenceItsAloneLogitsBitForBit() {
    LlamaModel model = SharedFiles.stories260k();
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
      alone.add(runAlone(model, tokens[s], promptLen[s]));
    }
    List<List<float[]>> batched = runMixed(model, tokens, promptLen, rnd);
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
  void fastForwardAgreesWithTheScalarReference() {
    LlamaModel model = SharedFiles.stories260k();
    int[] tokens = new Random(7).ints(40, 3, model.config().vocabSize()).toArray();
    List<float[]> fast = runAlone(model, tokens, 1);
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

  /** Prompt in one extend, then one decode step per remaining token; logits of every step. */
  static List<float[]> runAlone(LlamaModel model, int[] tokens, int promptLen) {
    ModelConfig c = model.config();
    ReqToTokenPool reqToToken = new ReqToTokenPool(1, 512);
    KvPool kv = new KvPool(512, c.layers(), c.kvHeads(), c.headDim(), 1);
    List<float[]> out = new ArrayList<>();
    try (CpuModelRunner runner = new CpuModelRunner(model, kv, reqToToken, 1)) {
      ForwardBatch batch = new ForwardBatch();
      int[] slots = new int[tokens.length];
      for (int i = 0; i < slots.length; i++) {
        slots[i] = i + 1;
      }
      reqToToken.write(0, 0, slots);
      int pos = 0;
      while (pos < tokens.length) {
        int len = pos == 0 ? promptLen : 1;
        batch.reset().add(0, pos, tokens, pos, len, slots, pos);
        float[] logits = new float[c.vocabSize()];
        runner.forward(batch, logits);
        out.add(logits);
        pos += len;
      }
    }
    return out;
  }

  /**
   * Sequences start at staggered steps, prompts are prefilled in two chunks where possible, and KV
   * slots are drawn shuffled from a shared pool, so steps mix extends and decodes.
   */
  private static List<List<float[]>> runMixed(
      LlamaModel model, int[][] tokens, int[] promptLen, Random rnd) {
    ModelConfig c = model.config();
    int poolSize = 2048;
    ReqToTokenPool reqToToken = new ReqToTokenPool(SEQUENCES, 512);
    KvPool kv = new KvPool(poolSize, c.layers(), c.kvHeads(), c.headDim(), 1);
    List<Integer> free = new ArrayList<>();
    for (int i = 1; i <= poolSize; i++) {
      free.add(i);
    }
    Collections.shuffle(free, rnd);
    int[][] slots = new int[SEQUENCES][];
    int next = 0;
    for (int s = 0; s < SEQUENCES; s++) {
      slots[s] = new int[tokens[s].length];
      for (int i = 0; i < slots[s].length; i++) {
        slots[s][i] = free.get(next++);
      }
      reqToToken.write(SEQUENCES - 1 - s, 0, slots[s]);
    }
    List<List<float[]>> out = new ArrayList<>();
    for (int s = 0; s < SEQUENCES; s++) {
      out.add(new ArrayList<>());
    }
    int[] pos = new int[SEQUENCES];
    int firstChunk[] = new int[SEQUENCES];
    for (int s = 0; s < SEQUENCES; s++) {
      firstChunk[s] = promptLen[s] >= 4 ? promptLen[s] / 2 : promptLen[s];
    }
    try (CpuModelRunner runner = new CpuModelRunner(model, kv, reqToToken, 2)) {
      ForwardBatch batch = new ForwardBatch();
      float[] logits = new float[SEQUENCES * c.vocabSize()];
      int[] member = new int[SEQUENCES];
      for (int step = 0; ; step++) {
        batch.reset();
        int members = 0;
        for (int s = SEQUENCES - 1; s >= 0; s--) {
          if (step < s || pos[s] >= tokens[s].length) {
            continue;
          }
          int len = pos[s] == 0 ? firstChunk[s] : pos[s] < promptLen[s] ? promptLen[s] - pos[s] : 1;
          batch.add(SEQUENCES - 1 - s, pos[s], tokens[s], pos[s], len, slots[s], pos[s]);
          member[members++] = s;
        }
        if (members == 0) {
          break;
        }
        runner.forward(batch, logits);
        for (int b = 0; b < members; b++) {
          int s = member[b];
          pos[s] += batch.extendLen(b);
          if (pos[s] >= promptLen[s]) {
            out.get(s).add(Arrays.copyOfRange(logits, b * c.vocabSize(), (b + 1) * c.vocabSize()));
          }
        }
      }
    }
    return out;
  }

  private static int[] bits(float[] v) {
    int[] b = new int[v.length];
    for (int i = 0; i < v.length; i++) {
      b[i] = Float.floatToRawIntBits(v[i]);
    }
    return b;
  }
}
