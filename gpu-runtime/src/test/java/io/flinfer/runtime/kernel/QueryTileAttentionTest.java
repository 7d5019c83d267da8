package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvStoreType;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The query-tile kernel gives every query the bits the one-query kernel gives it, for every head
 * width, group size, tile fill and position (the causal triangle included), and both agree with a
 * plain softmax-weighted sum.
 */
class QueryTileAttentionTest {
  private static final int MAX_CONTEXT = 96;

  @ParameterizedTest(
      name = "headDim {0}, {1} kv heads, group {2}, KV {3}, soft cap {4} (and scale 0.3 if capped)")
  @CsvSource({
    "8, 4, 2, FP32, 0",
    "8, 2, 1, BF16, 0",
    "16, 2, 4, FP16, 0",
    "64, 2, 1, FP32, 0",
    "64, 1, 8, BF16, 0",
    "32, 2, 2, FP16, 0",
    "8, 4, 2, FP32, 0.7",
    "64, 1, 8, BF16, 0.7"
  })
  void everyQueryMatchesTheOneQueryKernelBitForBit(
      int headDim, int kvHeads, int group, KvStoreType type, float softCap) {
    Random rnd = new Random(headDim * 31L + kvHeads * 7L + group);
    int heads = kvHeads * group;
    int dim = heads * headDim;
    KvPool kv = new KvPool(200, 1, kvHeads, headDim, 1, type);
    // The request's positions live at shuffled slots, as after evictions and chunking.
    int[] table = new int[MAX_CONTEXT];
    int[] slots = AttentionFixtures.shuffledSlots(rnd, 199);
    float[] row = new float[kv.rowWidth()];
    float[] row2 = new float[kv.rowWidth()];
    for (int j = 0; j < MAX_CONTEXT; j++) {
      table[j] = slots[j];
      AttentionFixtures.fill(rnd, row);
      AttentionFixtures.fill(rnd, row2);
      kv.setKv(0, table[j], row, 0, row2, 0);
    }
    // The capped cases also take a score scale of their own (Granite's attention.scale).
    float scale = softCap > 0 ? 0.3f : 1f / (float) Math.sqrt(headDim);
    Attention one = new Attention(kv, MAX_CONTEXT, scale, softCap);
    QueryTileAttention tile = new QueryTileAttention(kv, MAX_CONTEXT, scale, softCap);
    int perTile = QueryTileAttention.LANES / group;
    for (int firstPosition : new int[] {0, 1, 7, 40, MAX_CONTEXT - perTile}) {
      for (int tokens = 1; tokens <= perTile; tokens++) {
        float[] q = new float[tokens * dim];
        AttentionFixtures.fill(rnd, q);
        for (int kvHead = 0; kvHead < kvHeads; kvHead++) {
          float[] fromTile = new float[tokens * dim];
          float[] alone = new float[tokens * dim];
          tile.attend(0, q, fromTile, dim, 0, tokens, firstPosition, kvHead, group, table, 0);
          for (int t = 0; t < tokens; t++) {
            for (int h = kvHead * group; h < (kvHead + 1) * group; h++) {
              int off = t * dim + h * headDim;
              one.attendHead(0, q, off, kvHead, table, 0, firstPosition + t + 1, alone, off);
              float[] expected =
                  AttentionFixtures.reference(
                      kv, table, q, off, kvHead, firstPosition + t + 1, scale, softCap);
              for (int i = 0; i < headDim; i++) {
                assertThat(fromTile[off + i])
                    .as("position %d, head %d, element %d", firstPosition + t, h, i)
                    .isEqualTo(alone[off + i]);
                assertThat(fromTile[off + i]).isCloseTo(expected[i], within(2e-5f));
              }
            }
          }
        }
      }
    }
  }
}
