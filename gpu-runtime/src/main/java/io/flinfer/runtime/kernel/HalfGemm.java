package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Products of one token with 16-bit float weights ({@link HalfWeights}), converted in vector
 * registers as they stream past: a decode step reads two bytes a weight and writes nothing.
 *
 * <p>Each output is reduced as {@link Gemm} reduces a decoded row (one 8-lane accumulator over the
 * row, lanes summed in order, then the scalar tail), so a token gets the same bits alone as in a
 * batch, where rows are decoded once for all the batch's tokens.
 */
public final class HalfGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;

  private HalfGemm() {}

  /** Rows [oFrom, oTo) of {@code w} times token {@code t} of {@code x}; {@code tmp} holds 8. */
  public static void rows(
      HalfWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp) {
    if (w.isBf16()) {
      bf16Rows(w, x, t, out, outStride, oFrom, oTo, tmp);
    } else {
      fp16Rows(w, x, t, out, outStride, oFrom, oTo, tmp);
    }
  }

  private static void fp16Rows(
      HalfWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp) {
    short[] h = w.halves();
    int cols = w.cols();
    int colsV = cols - cols % L;
    int x0 = t * cols;
    for (int o = oFrom; o < oTo; o++) {
      int r = o * cols;
      FloatVector acc = FloatVector.zero(S);
      for (int i = 0; i < colsV; i += L) {
        acc = HalfVectors.fp16(h, r + i).fma(FloatVector.fromArray(S, x, x0 + i), acc);
      }
      acc.intoArray(tmp, 0);
      out[t * outStride + o] = finish(w, o, tmp, x, x0, colsV, cols);
    }
  }

  private static void bf16Rows(
      HalfWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp) {
    short[] h = w.halves();
    int cols = w.cols();
    int colsV = cols - cols % L;
    int x0 = t * cols;
    for (int o = oFrom; o < oTo; o++) {
      int r = o * cols;
      FloatVector acc = FloatVector.zero(S);
      for (int i = 0; i < colsV; i += L) {
        acc = HalfVectors.bf16(h, r + i).fma(FloatVector.fromArray(S, x, x0 + i), acc);
      }
      acc.intoArray(tmp, 0);
      out[t * outStride + o] = finish(w, o, tmp, x, x0, colsV, cols);
    }
  }

  /** The lanes in order, then the scalar tail, as {@link GemmKernels} finishes a row. */
  private static float finish(
      HalfWeights w, int o, float[] tmp, float[] x, int x0, int colsV, int cols) {
    float s = GemmKernels.sum8(tmp, 0);
    for (int i = colsV; i < cols; i++) {
      s += w.value(o, i) * x[x0 + i];
    }
    return s;
  }
}
