package io.flinfer.runtime.kernel;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvRows;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Causal attention of one query head of one token over its request's context, reading K and V from
 * the KV pool through the request-to-token table row. Positions are visited in order and each
 * output element is reduced in one fixed order, so the result does not depend on the batch, on
 * chunking, or on which positions came from a prefix cache.
 */
public final class Attention {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;

  private final KvPool kv;
  private final float scale;
  private final float softCap;
  private final int headDim;
  private final int rowWidth;
  private final boolean vector;
  private final float[] scores;
  private final float[] row;
  private final float[] lanes = new float[32];

  /** Scratch for one thread: contexts up to {@code maxContext} positions. */
  public Attention(KvPool kv, int maxContext) {
    this(kv, maxContext, 1f / (float) Math.sqrt(kv.headDim()), 0f);
  }

  /**
   * As {@link #Attention(KvPool, int)}, each score the dot product times {@code scale} (by default
   * 1/sqrt of the head; Granite sets its own), then capped by {@link SoftCap} at {@code softCap}
   * (0: not).
   */
  public Attention(KvPool kv, int maxContext, float scale, float softCap) {
    this.scale = scale;
    this.softCap = softCap;
    this.kv = kv;
    this.headDim = kv.headDim();
    this.rowWidth = kv.rowWidth();
    this.vector = headDim % S.length() == 0;
    this.scores = new float[maxContext];
    this.row = new float[headDim];
  }

  /**
   * @param q query of this head at {@code q[qOff..qOff + headDim)}
   * @param kvHead the KV head this query head reads
   * @param reqToToken the request-to-token table; the context's slots are {@code reqToToken[rowBase
   *     .. rowBase + contextLen)}
   */
  public void attendHead(
      int layer,
      float[] q,
      int qOff,
      int kvHead,
      int[] reqToToken,
      int rowBase,
      int contextLen,
      float[] out,
      int outOff) {
    KvRows keys = kv.keys(layer);
    int kvOff = kvHead * headDim;
    float max = Float.NEGATIVE_INFINITY;
    int j = 0;
    if (vector) {
      // Four positions at a time: independent accumulator chains, each position's own sum.
      for (; j + 4 <= contextLen; j += 4) {
        dot4(q, qOff, keys, reqToToken, rowBase + j, kvOff, scale, j);
        max =
            Math.max(
                max,
                Math.max(
                    Math.max(scores[j], scores[j + 1]), Math.max(scores[j + 2], scores[j + 3])));
      }
    }
    for (; j < contextLen; j++) {
      int slot = reqToToken[rowBase + j];
      float s;
      if (vector) {
        s = dotRow(q, qOff, keys, slot * rowWidth + kvOff);
      } else {
        kv.readKeys(layer, slot, kvOff, headDim, row, 0);
        s = dotArrayScalar(q, qOff, row);
      }
      s *= scale;
      scores[j] = s;
      if (s > max) {
        max = s;
      }
    }
    if (softCap > 0) {
      SoftCap.apply(scores, 0, contextLen, softCap);
      max = Float.NEGATIVE_INFINITY;
      for (j = 0; j < contextLen; j++) {
        max = Math.max(max, scores[j]);
      }
    }
    int lanes = S.length();
    // Softmax weights in place; their sum is added in position order as before.
    FastExp.exp(scores, 0, contextLen, max, scores);
    float sum = 0f;
    for (j = 0; j < contextLen; j++) {
      sum += scores[j];
    }
    float inv = 1f / sum;
    if (vector) {
      KvRows values = kv.values(layer);
      int i = 0;
      for (; i + 64 <= headDim; i += 64) {
        accumulate64(values, reqToToken, rowBase, contextLen, kvOff + i, inv, out, outOff + i);
      }
      // One register accumulator per slice of the head, positions in order.
      for (; i < headDim; i += lanes) {
        FloatVector acc = FloatVector.zero(S);
        for (j = 0; j < contextLen; j++) {
          int e = reqToToken[rowBase + j] * rowWidth + kvOff + i;
          acc = KvVectors.load(values, e).fma(FloatVector.broadcast(S, scores[j] * inv), acc);
        }
        acc.intoArray(out, outOff + i);
      }
    } else {
      for (int i = 0; i < headDim; i++) {
        out[outOff + i] = 0f;
      }
      for (j = 0; j < contextLen; j++) {
        float a = scores[j] * inv;
        kv.readValues(layer, reqToToken[rowBase + j], kvOff, headDim, row, 0);
        for (int i = 0; i < headDim; i++) {
          out[outOff + i] = Math.fma(row[i], a, out[outOff + i]);
        }
      }
    }
  }

  /** Scores of positions j..j+3: each one accumulator over the head, as {@link #dotBuffer}. */
  private void dot4(
      float[] q, int qOff, KvRows keys, int[] reqToToken, int at, int kvOff, float scale, int j) {
    int e0 = reqToToken[at] * rowWidth + kvOff;
    int e1 = reqToToken[at + 1] * rowWidth + kvOff;
    int e2 = reqToToken[at + 2] * rowWidth + kvOff;
    int e3 = reqToToken[at + 3] * rowWidth + kvOff;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = FloatVector.zero(S);
    FloatVector a2 = FloatVector.zero(S);
    FloatVector a3 = FloatVector.zero(S);
    for (int i = 0; i < headDim; i += S.length()) {
      FloatVector qv = FloatVector.fromArray(S, q, qOff + i);
      a0 = qv.fma(KvVectors.load(keys, e0 + i), a0);
      a1 = qv.fma(KvVectors.load(keys, e1 + i), a1);
      a2 = qv.fma(KvVectors.load(keys, e2 + i), a2);
      a3 = qv.fma(KvVectors.load(keys, e3 + i), a3);
    }
    // Stored, then summed: vectors passed to a helper the JIT does not inline would be boxed.
    a0.intoArray(lanes, 0);
    a1.intoArray(lanes, 8);
    a2.intoArray(lanes, 16);
    a3.intoArray(lanes, 24);
    scores[j] = GemmKernels.sum8(lanes, 0) * scale;
    scores[j + 1] = GemmKernels.sum8(lanes, 8) * scale;
    scores[j + 2] = GemmKernels.sum8(lanes, 16) * scale;
    scores[j + 3] = GemmKernels.sum8(lanes, 24) * scale;
  }

  /**
   * {@code out[0..64) = sum_j p_j V_j[off..off+64)}: eight register accumulators, positions in
   * order, so each output element is summed as in the one-slice loop.
   */
  private void accumulate64(
      KvRows values,
      int[] reqToToken,
      int rowBase,
      int contextLen,
      int off,
      float inv,
      float[] out,
      int outOff) {
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = FloatVector.zero(S);
    FloatVector a2 = FloatVector.zero(S);
    FloatVector a3 = FloatVector.zero(S);
    FloatVector a4 = FloatVector.zero(S);
    FloatVector a5 = FloatVector.zero(S);
    FloatVector a6 = FloatVector.zero(S);
    FloatVector a7 = FloatVector.zero(S);
    for (int j = 0; j < contextLen; j++) {
      int e = reqToToken[rowBase + j] * rowWidth + off;
      FloatVector p = FloatVector.broadcast(S, scores[j] * inv);
      a0 = KvVectors.load(values, e).fma(p, a0);
      a1 = KvVectors.load(values, e + 8).fma(p, a1);
      a2 = KvVectors.load(values, e + 16).fma(p, a2);
      a3 = KvVectors.load(values, e + 24).fma(p, a3);
      a4 = KvVectors.load(values, e + 32).fma(p, a4);
      a5 = KvVectors.load(values, e + 40).fma(p, a5);
      a6 = KvVectors.load(values, e + 48).fma(p, a6);
      a7 = KvVectors.load(values, e + 56).fma(p, a7);
    }
    a0.intoArray(out, outOff);
    a1.intoArray(out, outOff + 8);
    a2.intoArray(out, outOff + 16);
    a3.intoArray(out, outOff + 24);
    a4.intoArray(out, outOff + 32);
    a5.intoArray(out, outOff + 40);
    a6.intoArray(out, outOff + 48);
    a7.intoArray(out, outOff + 56);
  }

  private float dotRow(float[] q, int qOff, KvRows keys, int e) {
    FloatVector acc = FloatVector.zero(S);
    for (int i = 0; i < headDim; i += S.length()) {
      acc = FloatVector.fromArray(S, q, qOff + i).fma(KvVectors.load(keys, e + i), acc);
    }
    return GemmKernels.sumLanes(acc);
  }

  private float dotArrayScalar(float[] q, int qOff, float[] k) {
    float s = 0f;
    for (int i = 0; i < headDim; i++) {
      s += q[qOff + i] * k[i];
    }
    return s;
  }
}
