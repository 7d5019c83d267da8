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
 * A shared-prefix tile (one token of each of several requests whose contexts begin with the same
 * slots) gives every query the bits the one-query kernel gives it, whatever the prefix, the
 * requests' own lengths, the tile's fill and the head shape.
 */
class SharedPrefixTileTest {
  private static final int ROW = 128;

  @ParameterizedTest(name = "headDim {0}, {1} kv heads, group {2}, shared {3}, KV {4}")
  @CsvSource({
    "8, 4, 2, 40, FP32",
    "8, 4, 2, 1, BF16",
    "8, 2, 1, 64, FP16",
    "16, 2, 4, 17, FP32",
    "64, 2, 1, 33, BF16",
    "32, 1, 8, 9, FP16",
    "24, 3, 2, 50, FP32"
  })
  void everyQueryMatchesTheOneQueryKernelBitForBit(
      int headDim, int kvHeads, int group, int shared, KvStoreType type) {
    Random rnd = new Random(headDim * 7L + kvHeads * 3L + group * 11L + shared);
    int heads = kvHeads * group;
    int dim = heads * headDim;
    int requests = QueryTileAttention.LANES / group;
    KvPool kv = new KvPool(requests * ROW + 1, 1, kvHeads, headDim, 1, type);
    // Rows: the shared slots first, then each request's own slots, shuffled over the pool.
    int[] slots = AttentionFixtures.shuffledSlots(rnd, requests * ROW);
    int[] table = new int[requests * ROW];
    for (int r = 0; r < requests; r++) {
      for (int j = 0; j < ROW; j++) {
        table[r * ROW + j] = j < shared ? slots[j] : slots[r * ROW + j];
      }
    }
    float[] row = new float[kv.rowWidth()];
    float[] row2 = new float[kv.rowWidth()];
    for (int s : slots) {
      AttentionFixtures.fill(rnd, row);
      AttentionFixtures.fill(rnd, row2);
      kv.setKv(0, s, row, 0, row2, 0);
    }
    Attention one = new Attention(kv, ROW);
    QueryTileAttention tile = new QueryTileAttention(kv, ROW);
    for (int fill = 1; fill <= requests; fill++) {
      // Requests of different lengths: one token just past the prefix, others further on.
      int[] position = new int[fill];
      for (int r = 0; r < fill; r++) {
        position[r] = Math.min(ROW - 1, shared + (r * 37 + fill * 5) % (ROW - shared));
      }
      position[0] = shared;
      float[] q = new float[fill * dim];
      AttentionFixtures.fill(rnd, q);
      for (int kvHead = 0; kvHead < kvHeads; kvHead++) {
        int used = fill * group;
        int[] laneOffset = new int[used];
        int[] laneRow = new int[used];
        int[] laneLast = new int[used];
        for (int k = 0; k < used; k++) {
          int r = k / group;
          laneOffset[k] = r * dim + (kvHead * group + k % group) * headDim;
          laneRow[k] = r * ROW;
          laneLast[k] = position[r];
        }
        float[] fromTile = new float[fill * dim];
        tile.attendShared(
            0, q, fromTile, used, laneOffset, laneRow, laneLast, kvHead, shared, table);
        float[] alone = new float[fill * dim];
        for (int k = 0; k < used; k++) {
          int off = laneOffset[k];
          one.attendHead(0, q, off, kvHead, table, laneRow[k], laneLast[k] + 1, alone, off);
          float[] expected =
              AttentionFixtures.reference(
                  kv, slice(table, laneRow[k]), q, off, kvHead, laneLast[k] + 1);
          for (int i = 0; i < headDim; i++) {
            assertThat(fromTile[off + i])
                .as("fill %d, lane %d, element %d", fill, k, i)
                .isEqualTo(alone[off + i]);
            assertThat(fromTile[off + i]).isCloseTo(expected[i], within(2e-5f));
          }
        }
      }
    }
  }

  @Test
  void refusesALaneInsideThePrefix() {
    KvPool kv = new KvPool(16, 1, 1, 8, 1);
    QueryTileAttention tile = new QueryTileAttention(kv, 16);
    assertThatThrownBy(
            () ->
                tile.attendShared(
                    0,
                    new float[16],
                    new float[16],
                    2,
                    new int[] {0, 8},
                    new int[] {0, 0},
                    new int[] {4, 2},
                    0,
                    3,
                    new int[16]))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static int[] slice(int[] table, int from) {
    return java.util.Arrays.copyOfRange(table, from, from + ROW);
  }
}
