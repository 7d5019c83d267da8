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

  /** Rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp} holds 8 floats. */
  static void rows(HalfWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    short[] h = w.halves();
    boolean bf16 = w.isBf16();
    int cols = w.cols();
    int colsV = cols - cols % L;
    for (int o = oFrom; o < oTo; o++) {
      int r = o * cols;
      FloatVector acc = FloatVector.zero(S);
      // The test is the same for every vector of the matrix: the compiler takes it out of the loop.
      for (int i = 0; i < colsV; i += L) {
        FloatVector v = bf16 ? HalfVectors.bf16(h, r + i) : HalfVectors.fp16(h, r + i);
        acc = v.fma(FloatVector.fromArray(S, x, i), acc);
      }
      acc.intoArray(tmp, 0);
      out[o] = finish(w, o, tmp, x, colsV, cols);
    }
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
