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

  /**
   * Rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp} holds 8 floats. Four rows
   * go side by side: each keeps its own accumulator (so its order is unchanged), and four
   * independent chains of multiply-adds hide the latency one chain would wait on. The last group
   * repeats its last row where fewer than four are left.
   */
  static void rows(HalfWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    for (int o = oFrom; o < oTo; o += 4) {
      int last = oTo - 1;
      rows4(w, x, out, o, Math.min(o + 1, last), Math.min(o + 2, last), Math.min(o + 3, last), tmp);
    }
  }

  private static void rows4(
      HalfWeights w, float[] x, float[] out, int o0, int o1, int o2, int o3, float[] tmp) {
    short[] h = w.halves();
    boolean bf16 = w.isBf16();
    boolean finite = w.finiteHalves();
    int cols = w.cols();
    int colsV = cols - cols % L;
    int r0 = o0 * cols;
    int r1 = o1 * cols;
    int r2 = o2 * cols;
    int r3 = o3 * cols;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = a0;
    FloatVector a2 = a0;
    FloatVector a3 = a0;
    // The conversion is the same for every vector of the matrix: the compiler takes the tests out
    // of the loop.
    for (int i = 0; i < colsV; i += L) {
      FloatVector xv = FloatVector.fromArray(S, x, i);
      a0 = HalfVectors.half(h, r0 + i, bf16, finite).fma(xv, a0);
      a1 = HalfVectors.half(h, r1 + i, bf16, finite).fma(xv, a1);
      a2 = HalfVectors.half(h, r2 + i, bf16, finite).fma(xv, a2);
      a3 = HalfVectors.half(h, r3 + i, bf16, finite).fma(xv, a3);
    }
    a0.intoArray(tmp, 0);
    out[o0] = finish(w, o0, tmp, x, colsV, cols);
    a1.intoArray(tmp, 0);
    out[o1] = finish(w, o1, tmp, x, colsV, cols);
    a2.intoArray(tmp, 0);
    out[o2] = finish(w, o2, tmp, x, colsV, cols);
    a3.intoArray(tmp, 0);
    out[o3] = finish(w, o3, tmp, x, colsV, cols);
  }

  /** The lanes in order, then the scalar tail, as {@link GemmKernels} finishes a row. */
  private static float finish(HalfWeights w, int o, float[] tmp, float[] x, int colsV, int cols) {
    float s = GemmKernels.sum8(tmp, 0);
    for (int i = colsV; i < cols; i++) {
      s += w.value(o, i) * x[i];
    }
    return s;
  }
}
