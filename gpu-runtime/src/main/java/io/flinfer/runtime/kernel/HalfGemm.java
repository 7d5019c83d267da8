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
   * Rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp} holds 32 floats.
   *
   * <p>Long rows go four side by side: each keeps its own accumulator (so its order is unchanged),
   * and four independent chains of multiply-adds hide the latency one chain waits on (a 2048 x 8192
   * matrix: 9 against 17 GB/s on one core of an AMD EPYC). Short rows go one at a time: reading
   * four rows a kilobyte or two apart defeats the hardware prefetcher (32000 x 768 from memory: 8.3
   * against 12.7 GB/s). The last group repeats its last row where fewer than four are left.
   */
  static void rows(HalfWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    if (w.cols() < INTERLEAVED_COLS) {
      rows1(w, x, out, oFrom, oTo, tmp);
      return;
    }
    for (int o = oFrom; o < oTo; o += 4) {
      int last = oTo - 1;
      int o1 = Math.min(o + 1, last);
      int o2 = Math.min(o + 2, last);
      int o3 = Math.min(o + 3, last);
      if (w.isBf16() || w.finiteHalves()) {
        rows4(w, x, out, o, o1, o2, o3, tmp);
      } else {
        rows1(w, x, out, o, o3 + 1, tmp);
      }
    }
  }

  /** Columns from which rows are multiplied four at a time. */
  static final int INTERLEAVED_COLS = 2048;

  /** One row at a time, in the same order. */
  private static void rows1(
      HalfWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    short[] h = w.halves();
    boolean bf16 = w.isBf16();
    boolean finite = w.finiteHalves();
    int cols = w.cols();
    int colsV = cols - cols % L;
    for (int o = oFrom; o < oTo; o++) {
      int r = o * cols;
      FloatVector acc = FloatVector.zero(S);
      // The conversion is the same for every vector of the matrix: the compiler takes the tests
      // out of the loop.
      for (int i = 0; i < colsV; i += L) {
        FloatVector v =
            bf16
                ? HalfVectors.bf16(h, r + i)
                : finite ? HalfVectors.fp16Finite(h, r + i) : HalfVectors.fp16(h, r + i);
        acc = v.fma(FloatVector.fromArray(S, x, i), acc);
      }
      acc.intoArray(tmp, 0);
      out[o] = finish(w, o, tmp, 0, x, colsV, cols);
    }
  }

  /** Four rows of bfloat16 or of halves with no infinity or NaN. */
  private static void rows4(
      HalfWeights w, float[] x, float[] out, int o0, int o1, int o2, int o3, float[] tmp) {
    short[] h = w.halves();
    boolean bf16 = w.isBf16();
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
    for (int i = 0; i < colsV; i += L) {
      FloatVector xv = FloatVector.fromArray(S, x, i);
      a0 = (bf16 ? HalfVectors.bf16(h, r0 + i) : HalfVectors.fp16Finite(h, r0 + i)).fma(xv, a0);
      a1 = (bf16 ? HalfVectors.bf16(h, r1 + i) : HalfVectors.fp16Finite(h, r1 + i)).fma(xv, a1);
      a2 = (bf16 ? HalfVectors.bf16(h, r2 + i) : HalfVectors.fp16Finite(h, r2 + i)).fma(xv, a2);
      a3 = (bf16 ? HalfVectors.bf16(h, r3 + i) : HalfVectors.fp16Finite(h, r3 + i)).fma(xv, a3);
    }
    // Through the scratch: vectors handed to a helper would be boxed.
    a0.intoArray(tmp, 0);
    a1.intoArray(tmp, 8);
    a2.intoArray(tmp, 16);
    a3.intoArray(tmp, 24);
    finish4(w, x, out, o0, o1, o2, o3, colsV, tmp);
  }

  private static void finish4(
      HalfWeights w,
      float[] x,
      float[] out,
      int o0,
      int o1,
      int o2,
      int o3,
      int colsV,
      float[] tmp) {
    int cols = w.cols();
    out[o0] = finish(w, o0, tmp, 0, x, colsV, cols);
    out[o1] = finish(w, o1, tmp, 8, x, colsV, cols);
    out[o2] = finish(w, o2, tmp, 16, x, colsV, cols);
    out[o3] = finish(w, o3, tmp, 24, x, colsV, cols);
  }

  /** The lanes in order, then the scalar tail, as {@link GemmKernels} finishes a row. */
  private static float finish(
      HalfWeights w, int o, float[] tmp, int k, float[] x, int colsV, int cols) {
    float s = GemmKernels.sum8(tmp, k);
    for (int i = colsV; i < cols; i++) {
      s += w.value(o, i) * x[i];
    }
    return s;
  }
}
