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
    int j = 0;
    int lanes = S.length();
    for (; j + lanes <= contextLen; j += lanes) {
      FastExp.exp(FloatVector.fromArray(S, scores, j).sub(max)).intoArray(scores, j);
    }
    for (; j < contextLen; j++) {
      scores[j] = FastExp.exp(scores[j] - max);
    }
    for (j = 0; j < contextLen; j++) {
      sum += scores[j];
    }
    float inv = 1f / sum;
    if (vector) {
      // One register accumulator per slice of the head, positions in order.
      for (int i = 0; i < headDim; i += lanes) {
        FloatVector acc = FloatVector.zero(S);
        for (j = 0; j < contextLen; j++) {
          int v = reqToToken[rowBase + j] * rowWidth + kvOff + i;
          acc =
              FloatVector.fromArray(S, values, v)
                  .fma(FloatVector.broadcast(S, scores[j] * inv), acc);
        }
        acc.intoArray(out, outOff + i);
      }
    } else {
      for (int i = 0; i < headDim; i++) {
        float acc = 0f;
        for (j = 0; j < contextLen; j++) {
          acc =
              Math.fma(
                  values[reqToToken[rowBase + j] * rowWidth + kvOff + i], scores[j] * inv, acc);
        }
        out[outOff + i] = acc;
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
