package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvStoreType;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The all-heads kernel gives every head of a token the bits the one-query kernel gives it, for
 * every head width, group size, run of KV heads and context length (partial vectors of positions
 * and of heads included), and agrees with a plain softmax-weighted sum.
 */
class TokenAttentionTest {
  private static final int MAX_CONTEXT = 80;

  @ParameterizedTest(
      name = "headDim {0}, {1} kv heads, group {2}, KV {3}, soft cap {4} (and scale 0.3 if capped)")
  @CsvSource({
    "8, 4, 2, FP32, 0",
    "8, 4, 2, FP16, 0",
    "8, 4, 2, FP8_E4M3, 0",
    "8, 2, 1, BF16, 0",
    "8, 3, 3, FP16, 0",
    "16, 2, 4, FP32, 0",
    "64, 2, 1, BF16, 0",
    "64, 12, 1, FP16, 0",
    "64, 1, 8, FP32, 0",
    "32, 2, 2, BF16, 0",
    "24, 3, 2, FP16, 0",
    "16, 2, 2, FP8_E4M3, 0",
    "64, 1, 4, FP8_E5M2, 0",
    "8, 4, 2, FP32, 0.7",
    "8, 3, 3, FP16, 0.7",
    "64, 2, 1, BF16, 0.7"
  })
  void everyHeadMatchesTheOneQueryKernelBitForBit(
      int headDim, int kvHeads, int group, KvStoreType type, float softCap) {
    Random rnd = new Random(headDim * 131L + kvHeads * 17L + group);
    int heads = kvHeads * group;
    int dim = heads * headDim;
    KvPool kv = new KvPool(100, 2, kvHeads, headDim, 1, type);
    int[] table = new int[MAX_CONTEXT + 3];
    int[] slots = AttentionFixtures.shuffledSlots(rnd, 99);
    float[] row = new float[kv.rowWidth()];
    float[] row2 = new float[kv.rowWidth()];
    for (int layer = 0; layer < 2; layer++) {
      for (int j = 0; j < MAX_CONTEXT; j++) {
        table[j + 3] = slots[j];
        AttentionFixtures.fill(rnd, row);
        AttentionFixtures.fill(rnd, row2);
        kv.setKv(layer, table[j + 3], row, 0, row2, 0);
      }
    }
    // The capped cases also take a score scale of their own (Granite's attention.scale).
    float scale = softCap > 0 ? 0.3f : 1f / (float) Math.sqrt(headDim);
    Attention one = new Attention(kv, MAX_CONTEXT, scale, softCap);
    TokenAttention all = new TokenAttention(kv, heads, MAX_CONTEXT, scale, softCap);
    float[] q = new float[dim + 5];
    for (int context : new int[] {1, 2, 7, 8, 9, 33, MAX_CONTEXT}) {
      AttentionFixtures.fill(rnd, q);
      for (int first = 0; first < kvHeads; first++) {
        for (int count = 1; first + count <= kvHeads; count++) {
          float[] fromAll = new float[dim + 7];
          float[] alone = new float[dim + 5];
          // Offsets into q and out, and a table row that does not start at 0, as in a batch.
          all.attend(1, q, 5, fromAll, 7, first, count, group, table, 3, context);
          for (int h = first * group; h < (first + count) * group; h++) {
            int off = 5 + h * headDim;
            one.attendHead(1, q, off, h / group, table, 3, context, alone, off);
            for (int i = 0; i < headDim; i++) {
              assertThat(fromAll[7 + h * headDim + i])
                  .as("context %d, head %d, element %d", context, h, i)
                  .isEqualTo(alone[off + i]);
            }
          }
          for (int h = 0; h < heads; h++) {
            boolean attended = h >= first * group && h < (first + count) * group;
            if (!attended) {
              assertThat(fromAll[7 + h * headDim]).as("head %d is not written", h).isZero();
            }
          }
        }
      }
    }
  }

  @Test
  void agreesWithAPlainSoftmax() {
    Random rnd = new Random(5);
    KvPool kv = new KvPool(64, 1, 4, 8, 1);
    int[] table = AttentionFixtures.shuffledSlots(rnd, 63);
    float[] row = new float[kv.rowWidth()];
    float[] row2 = new float[kv.rowWidth()];
    for (int j = 0; j < 63; j++) {
      AttentionFixtures.fill(rnd, row);
      AttentionFixtures.fill(rnd, row2);
      kv.setKv(0, table[j], row, 0, row2, 0);
    }
    float[] q = new float[64];
    AttentionFixtures.fill(rnd, q);
    float[] out = new float[64];
    new TokenAttention(kv, 8, 63).attend(0, q, 0, out, 0, 0, 4, 2, table, 0, 63);
    for (int h = 0; h < 8; h++) {
      float[] expected = AttentionFixtures.reference(kv, table, q, h * 8, h / 2, 63);
      for (int i = 0; i < 8; i++) {
        assertThat(out[h * 8 + i]).isCloseTo(expected[i], within(2e-5f));
      }
    }
  }

  @Test
  void refusesMoreHeadsThanItsScratchHolds() {
    KvPool kv = new KvPool(8, 1, 4, 8, 1);
    TokenAttention all = new TokenAttention(kv, 4, 8);
    assertThatThrownBy(
            () -> all.attend(0, new float[64], 0, new float[64], 0, 0, 4, 2, new int[8], 0, 4))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
