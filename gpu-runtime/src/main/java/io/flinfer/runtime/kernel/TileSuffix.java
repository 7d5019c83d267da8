package io.flinfer.runtime.kernel;

import io.flinfer.memcache.KvRows;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The positions of a shared-prefix tile ({@link QueryTileAttention#attendShared}) past the shared
 * prefix, where each lane reads its own request's keys and values: scores one lane at a time, and
 * value sums as eight (lane, slice of eight elements) chains side by side, each continuing the sum
 * the shared positions began. Works on the tile's score and output arrays.
 */
final class TileSuffix {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final int LANES = S.length();
  private final int headDim;
  private final int rowWidth;
  private final float scale;
  private final float[] scores;
  private final float[] outputs;
  private final float[] products = new float[LANES];
  private final float[] column = new float[LANES];
  private final int[] pairRow = new int[LANES];
  private final int[] pairOffset = new int[LANES];
  private final int[] pairLane = new int[LANES];

  TileSuffix(int headDim, int rowWidth, float scale, float[] scores, float[] outputs) {
    this.headDim = headDim;
    this.rowWidth = rowWidth;
    this.scale = scale;
    this.scores = scores;
    this.outputs = outputs;
  }

  /**
   * Stores each lane's scaled score at positions {@code [shared, context)}, minus infinity past its
   * own position: each score eight chains over the head summed left to right, as the one-query
   * kernel computes it.
   */
  void scores(
      KvRows keys,
      float[] q,
      int used,
      int[] laneOffset,
      int[] laneRow,
      int[] laneLast,
      int kvOff,
      int shared,
      int context,
      int[] reqToToken) {
    for (int j = shared; j < context; j++) {
      int at = j * LANES;
      for (int k = 0; k < LANES; k++) {
        if (k >= used || j > laneLast[k]) {
          scores[at + k] = Float.NEGATIVE_INFINITY;
          continue;
        }
        int e = reqToToken[laneRow[k] + j] * rowWidth + kvOff;
        FloatVector acc = FloatVector.zero(S);
        for (int i = 0; i < headDim; i += LANES) {
          acc =
              FloatVector.fromArray(S, q, laneOffset[k] + i).fma(KvVectors.load(keys, e + i), acc);
        }
        acc.intoArray(products, 0);
        scores[at + k] = GemmKernels.sum8(products, 0) * scale;
      }
    }
  }

  /**
   * Adds each lane's weighted values at positions {@code [shared, laneLast[k]]} to its sums in
   * {@code outputs}, in position order; {@code inv} holds each lane's inverse softmax sum.
   */
  void values(
      KvRows values,
      int used,
      int[] laneRow,
      int[] laneLast,
      int kvOff,
      int shared,
      float[] inv,
      int[] reqToToken) {
    int slices = headDim / LANES;
    int pairs = used * slices;
    for (int first = 0; first < pairs; first += LANES) {
      int n = Math.min(LANES, pairs - first);
      int common = Integer.MAX_VALUE;
      for (int i = 0; i < LANES; i++) {
        // Pairs past the last repeat the first one of this pass and are not written back.
        int p = first + (i < n ? i : 0);
        int lane = p / slices;
        pairLane[i] = lane;
        pairRow[i] = laneRow[lane];
        pairOffset[i] = kvOff + (p % slices) * LANES;
        common = Math.min(common, laneLast[lane]);
      }
      FloatVector a0 = start(first, slices);
      FloatVector a1 = start(first + Math.min(1, n - 1), slices);
      FloatVector a2 = start(first + Math.min(2, n - 1), slices);
      FloatVector a3 = start(first + Math.min(3, n - 1), slices);
      FloatVector a4 = start(first + Math.min(4, n - 1), slices);
      FloatVector a5 = start(first + Math.min(5, n - 1), slices);
      FloatVector a6 = start(first + Math.min(6, n - 1), slices);
      FloatVector a7 = start(first + Math.min(7, n - 1), slices);
      // Positions every pair of the pass attends: eight chains side by side.
      for (int j = shared; j <= common; j++) {
        a0 = step(values, reqToToken, inv, 0, j, a0);
        a1 = step(values, reqToToken, inv, 1, j, a1);
        a2 = step(values, reqToToken, inv, 2, j, a2);
        a3 = step(values, reqToToken, inv, 3, j, a3);
        a4 = step(values, reqToToken, inv, 4, j, a4);
        a5 = step(values, reqToToken, inv, 5, j, a5);
        a6 = step(values, reqToToken, inv, 6, j, a6);
        a7 = step(values, reqToToken, inv, 7, j, a7);
      }
      finish(values, reqToToken, inv, laneLast, common, first, slices, 0, n, a0);
      finish(values, reqToToken, inv, laneLast, common, first, slices, 1, n, a1);
      finish(values, reqToToken, inv, laneLast, common, first, slices, 2, n, a2);
      finish(values, reqToToken, inv, laneLast, common, first, slices, 3, n, a3);
      finish(values, reqToToken, inv, laneLast, common, first, slices, 4, n, a4);
      finish(values, reqToToken, inv, laneLast, common, first, slices, 5, n, a5);
      finish(values, reqToToken, inv, laneLast, common, first, slices, 6, n, a6);
      finish(values, reqToToken, inv, laneLast, common, first, slices, 7, n, a7);
    }
  }

  /** Pair p's sum over the shared positions: lane p / slices, elements of slice p % slices. */
  private FloatVector start(int p, int slices) {
    int lane = p / slices;
    int d = (p % slices) * LANES;
    for (int i = 0; i < LANES; i++) {
      column[i] = outputs[(d + i) * LANES + lane];
    }
    return FloatVector.fromArray(S, column, 0);
  }

  /** Pair i of the pass at position j: its value row times its lane's weight, added. */
  private FloatVector step(
      KvRows values, int[] reqToToken, float[] inv, int i, int j, FloatVector acc) {
    int e = reqToToken[pairRow[i] + j] * rowWidth + pairOffset[i];
    int lane = pairLane[i];
    float weight = scores[j * LANES + lane] * inv[lane];
    return KvVectors.load(values, e).fma(FloatVector.broadcast(S, weight), acc);
  }

  /** Pair i's positions past the pass's common ones, then its sums back into {@code outputs}. */
  private void finish(
      KvRows values,
      int[] reqToToken,
      float[] inv,
      int[] laneLast,
      int common,
      int first,
      int slices,
      int i,
      int n,
      FloatVector acc) {
    if (i >= n) {
      return;
    }
    int lane = pairLane[i];
    for (int j = common + 1; j <= laneLast[lane]; j++) {
      acc = step(values, reqToToken, inv, i, j, acc);
    }
    acc.intoArray(column, 0);
    int d = ((first + i) % slices) * LANES;
    for (int e = 0; e < LANES; e++) {
      outputs[(d + e) * LANES + lane] = column[e];
    }
  }
}
