package io.flinfer.runtime.kernel;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvStoreType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
  private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

  private final KvPool kv;
  private final int headDim;
  private final int rowWidth;
  private final boolean fp32;
  private final boolean vector;
  private final float[] scores;
  private final float[] row;

  /** Scratch for one thread: contexts up to {@code maxContext} positions. */
  public Attention(KvPool kv, int maxContext) {
    this.kv = kv;
    this.headDim = kv.headDim();
    this.rowWidth = kv.rowWidth();
    this.fp32 = kv.storeType() == KvStoreType.FP32;
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
    ByteBuffer keys = kv.keys(layer);
    int kvOff = kvHead * headDim;
    float scale = 1f / (float) Math.sqrt(headDim);
    float max = Float.NEGATIVE_INFINITY;
    for (int j = 0; j < contextLen; j++) {
      int slot = reqToToken[rowBase + j];
      float s;
      if (fp32) {
        int e = slot * rowWidth + kvOff;
        s = vector ? dotBuffer(q, qOff, keys, e) : dotBufferScalar(q, qOff, keys, e);
      } else {
        kv.readKeys(layer, slot, kvOff, headDim, row, 0);
        s = vector ? dotArray(q, qOff, row) : dotArrayScalar(q, qOff, row);
      }
      s *= scale;
      scores[j] = s;
      if (s > max) {
        max = s;
      }
    }
    int lanes = S.length();
    int j = 0;
    for (; j + lanes <= contextLen; j += lanes) {
      FastExp.exp(FloatVector.fromArray(S, scores, j).sub(max)).intoArray(scores, j);
    }
    for (; j < contextLen; j++) {
      scores[j] = FastExp.exp(scores[j] - max);
    }
    float sum = 0f;
    for (j = 0; j < contextLen; j++) {
      sum += scores[j];
    }
    float inv = 1f / sum;
    if (fp32 && vector) {
      ByteBuffer values = kv.values(layer);
      // One register accumulator per slice of the head, positions in order.
      for (int i = 0; i < headDim; i += lanes) {
        FloatVector acc = FloatVector.zero(S);
        for (j = 0; j < contextLen; j++) {
          int e = reqToToken[rowBase + j] * rowWidth + kvOff + i;
          acc =
              FloatVector.fromByteBuffer(S, values, e * 4, NATIVE)
                  .fma(FloatVector.broadcast(S, scores[j] * inv), acc);
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

  private float dotBuffer(float[] q, int qOff, ByteBuffer keys, int e) {
    FloatVector acc = FloatVector.zero(S);
    for (int i = 0; i < headDim; i += S.length()) {
      acc =
          FloatVector.fromArray(S, q, qOff + i)
              .fma(FloatVector.fromByteBuffer(S, keys, (e + i) * 4, NATIVE), acc);
    }
    return GemmKernels.sumLanes(acc);
  }

  private float dotBufferScalar(float[] q, int qOff, ByteBuffer keys, int e) {
    float s = 0f;
    for (int i = 0; i < headDim; i++) {
      s += q[qOff + i] * keys.getFloat((e + i) * 4);
    }
    return s;
  }

  private float dotArray(float[] q, int qOff, float[] k) {
    FloatVector acc = FloatVector.zero(S);
    for (int i = 0; i < headDim; i += S.length()) {
      acc = FloatVector.fromArray(S, q, qOff + i).fma(FloatVector.fromArray(S, k, i), acc);
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
