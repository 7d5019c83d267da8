package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Causal attention of one query head of one token over its request's context, reading K and V
 * through the request-to-token table row. Positions are visited in order and each output element is
 * reduced in one fixed order, so the result does not depend on the batch, on chunking, or on which
 * positions came from a prefix cache.
 */
public final class Attention {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;

  private Attention() {}

  /**
   * @param q query of this head at {@code q[qOff..qOff + headDim)}
   * @param keys the layer's keys, [slot][kv head][head dim]
   * @param rowWidth floats per slot (kv heads x head dim)
   * @param kvOff offset of this head's kv head within a slot
   * @param reqToToken the request-to-token table; the context is {@code table[rowBase .. rowBase +
   *     contextLen)}
   * @param scores scratch of at least {@code contextLen} floats
   */
  public static void attendHead(
      float[] q,
      int qOff,
      float[] keys,
      float[] values,
      int rowWidth,
      int kvOff,
      int headDim,
      int[] reqToToken,
      int rowBase,
      int contextLen,
      float[] scores,
      float[] out,
      int outOff) {
    float scale = 1f / (float) Math.sqrt(headDim);
    boolean vector = headDim % S.length() == 0;
    float max = Float.NEGATIVE_INFINITY;
    for (int j = 0; j < contextLen; j++) {
      int k = reqToToken[rowBase + j] * rowWidth + kvOff;
      float s =
          vector ? dotVector(q, qOff, keys, k, headDim) : dotScalar(q, qOff, keys, k, headDim);
      s *= scale;
      scores[j] = s;
      if (s > max) {
        max = s;
      }
    }
    float sum = 0f;
    for (int j = 0; j < contextLen; j++) {
      float e = (float) Math.exp(scores[j] - max);
      scores[j] = e;
      sum += e;
    }
    float inv = 1f / sum;
    for (int i = 0; i < headDim; i++) {
      out[outOff + i] = 0f;
    }
    for (int j = 0; j < contextLen; j++) {
      float a = scores[j] * inv;
      int v = reqToToken[rowBase + j] * rowWidth + kvOff;
      if (vector) {
        FloatVector av = FloatVector.broadcast(S, a);
        for (int i = 0; i < headDim; i += S.length()) {
          FloatVector o = FloatVector.fromArray(S, out, outOff + i);
          FloatVector.fromArray(S, values, v + i).fma(av, o).intoArray(out, outOff + i);
        }
      } else {
        for (int i = 0; i < headDim; i++) {
          out[outOff + i] = Math.fma(values[v + i], a, out[outOff + i]);
        }
      }
    }
  }

  private static float dotVector(float[] a, int aOff, float[] b, int bOff, int n) {
    FloatVector acc = FloatVector.zero(S);
    for (int i = 0; i < n; i += S.length()) {
      acc = FloatVector.fromArray(S, a, aOff + i).fma(FloatVector.fromArray(S, b, bOff + i), acc);
    }
    return GemmKernels.sumLanes(acc);
  }

  private static float dotScalar(float[] a, int aOff, float[] b, int bOff, int n) {
    float s = 0f;
    for (int i = 0; i < n; i++) {
      s += a[aOff + i] * b[bOff + i];
    }
    return s;
  }
}
