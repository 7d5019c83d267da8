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
 *
 * <p>IEEE halves convert with one instruction fewer where the token's activations are below 2^16 in
 * magnitude: the product by 2^112 that turns a half's moved bits into its value moves onto the
 * activations, once per product ({@link HalfVectors#scaledForMoved}). Each multiply-add then rounds
 * the same real number, so the bits do not change. In isolation this made the one-token and small
 * batch products 15-55% faster (bench-kernel) where the weights sit in cache; a step that streams
 * them from memory is bound by the memory and does not change.
 */
public final class HalfGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;

  private HalfGemm() {}

  /**
   * Rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp} holds 32 floats.
   *
   * <p>Four rows go side by side, each keeping its own accumulator (so its order and bits are
   * unchanged): four independent chains of multiply-adds hide the latency one chain waits on. The
   * four come from the four quarters of the range, so that each quarter is read straight through,
   * as four sequential streams the hardware prefetcher follows; four neighbouring rows, a kilobyte
   * or two apart, defeat it (32000 x 768 from memory on one core of an AMD EPYC: one row at a time
   * 11.6 GB/s, four neighbours 7.0, four quarters 24.4). A quarter shorter than the first repeats
   * its last row.
   */
  static void rows(HalfWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    if (!w.isBf16() && !w.finiteHalves()) {
      rows1(w, x, out, oFrom, oTo, tmp);
      return;
    }
    // Halves convert without their final product where the token carries it (scaledForMoved).
    float[] moved =
        w.isBf16() || w.cols() % L != 0 ? null : HalfVectors.scaledForMoved(x, 0, w.cols());
    float[] xv = moved != null ? moved : x;
    int quarter = (oTo - oFrom + 3) / 4;
    int last = oTo - 1;
    for (int o = oFrom; o < oFrom + quarter; o++) {
      rows4(
          w,
          xv,
          0,
          moved != null,
          out,
          0,
          o,
          Math.min(o + quarter, last),
          Math.min(o + 2 * quarter, last),
          Math.min(o + 3 * quarter, last),
          tmp);
    }
  }

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
      out[o] = finish(w, o, tmp, 0, x, 0, colsV);
    }
  }

  /**
   * Four rows of bfloat16 or of halves with no infinity or NaN times the token at {@code
   * x[xRow..]}, into {@code out[outAt + o]}. With {@code moved}, {@code x} holds the token times
   * 2^112 ({@link HalfVectors#scaledForMoved}) and the row has no scalar tail.
   */
  static void rows4(
      HalfWeights w,
      float[] x,
      int xRow,
      boolean moved,
      float[] out,
      int outAt,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
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
    if (moved) {
      for (int i = 0; i < colsV; i += L) {
        FloatVector xv = FloatVector.fromArray(S, x, xRow + i);
        a0 = HalfVectors.fp16Moved(h, r0 + i).fma(xv, a0);
        a1 = HalfVectors.fp16Moved(h, r1 + i).fma(xv, a1);
        a2 = HalfVectors.fp16Moved(h, r2 + i).fma(xv, a2);
        a3 = HalfVectors.fp16Moved(h, r3 + i).fma(xv, a3);
      }
    } else {
      for (int i = 0; i < colsV; i += L) {
        FloatVector xv = FloatVector.fromArray(S, x, xRow + i);
        a0 = (bf16 ? HalfVectors.bf16(h, r0 + i) : HalfVectors.fp16Finite(h, r0 + i)).fma(xv, a0);
        a1 = (bf16 ? HalfVectors.bf16(h, r1 + i) : HalfVectors.fp16Finite(h, r1 + i)).fma(xv, a1);
        a2 = (bf16 ? HalfVectors.bf16(h, r2 + i) : HalfVectors.fp16Finite(h, r2 + i)).fma(xv, a2);
        a3 = (bf16 ? HalfVectors.bf16(h, r3 + i) : HalfVectors.fp16Finite(h, r3 + i)).fma(xv, a3);
      }
    }
    // Through the scratch: vectors handed to a helper would be boxed.
    a0.intoArray(tmp, 0);
    a1.intoArray(tmp, 8);
    a2.intoArray(tmp, 16);
    a3.intoArray(tmp, 24);
    finish4(w, x, xRow, out, outAt, o0, o1, o2, o3, colsV, tmp);
  }

  private static void finish4(
      HalfWeights w,
      float[] x,
      int xRow,
      float[] out,
      int outAt,
      int o0,
      int o1,
      int o2,
      int o3,
      int colsV,
      float[] tmp) {
    out[outAt + o0] = finish(w, o0, tmp, 0, x, xRow, colsV);
    out[outAt + o1] = finish(w, o1, tmp, 8, x, xRow, colsV);
    out[outAt + o2] = finish(w, o2, tmp, 16, x, xRow, colsV);
    out[outAt + o3] = finish(w, o3, tmp, 24, x, xRow, colsV);
  }

  /**
   * Row {@code o}'s output for the token at {@code x[xRow..]}: the lanes at {@code tmp[k..k+8)} in
   * order, then the scalar tail, as {@link GemmKernels} finishes a row.
   */
  static float finish(HalfWeights w, int o, float[] tmp, int k, float[] x, int xRow, int colsV) {
    float s = GemmKernels.sum8(tmp, k);
    for (int i = colsV; i < w.cols(); i++) {
      s += w.value(o, i) * x[xRow + i];
    }
    return s;
  }
}
