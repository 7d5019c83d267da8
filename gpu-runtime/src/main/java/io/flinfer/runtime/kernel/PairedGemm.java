package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Batched products over decoded rows of K-quant weights, in the order their one-token kernel
 * ({@link KQuantGemm}) uses: each output has two 8-lane accumulators, one for the even 8-value
 * chunks of the row and one for the odd ones, added at the end, their lanes summed in order, then
 * the scalar tail. Two accumulators halve the chain of dependent multiply-adds that bounds a
 * one-token product (measured 8 against 14 GB/s of Q8_0 weights on one core).
 */
public final class PairedGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;

  private PairedGemm() {}

  /**
   * The stored lanes of {@code even + odd} at {@code tmp[k..k + 8)} in order, then {@code w[i] *
   * x[i]} for the tail. Accumulators reach it through the scratch: vectors passed to a helper the
   * compiler does not inline would be boxed.
   */
  static float finish(
      float[] tmp, int k, float[] w, int wRow, float[] x, int xRow, int colsV, int cols) {
    float s = GemmKernels.sum8(tmp, k);
    for (int i = colsV; i < cols; i++) {
      s += w[wRow + i] * x[xRow + i];
    }
    return s;
  }

  /**
   * The plain reference of this order for one output: two scalar sums per lane, as the vector
   * kernels keep them.
   */
  public static float reference(float[] w, int wRow, float[] x, int xRow, int cols) {
    float[] even = new float[L];
    float[] odd = new float[L];
    int colsV = cols - cols % L;
    for (int i = 0; i < colsV; i++) {
      float[] acc = (i / L) % 2 == 0 ? even : odd;
      acc[i % L] = Math.fma(w[wRow + i], x[xRow + i], acc[i % L]);
    }
    float s = even[0] + odd[0];
    for (int k = 1; k < L; k++) {
      s += even[k] + odd[k];
    }
    for (int i = colsV; i < cols; i++) {
      s += w[wRow + i] * x[xRow + i];
    }
    return s;
  }

  /** Rows o and o + 1, decoded to {@code w[wOff..wOff + 2 * cols)}, all tokens. */
  public static void rows2(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    int t = 0;
    for (; t + 3 <= tokens; t += 3) {
      t3r2(w, wOff, cols, x, t, out, outStride, o, tmp);
    }
    for (; t < tokens; t++) {
      t1r1(w, wOff, cols, x, t, out, outStride, o, tmp);
      t1r1(w, wOff + cols, cols, x, t, out, outStride, o + 1, tmp);
    }
  }

  /** Row o, decoded to {@code w[wOff..wOff + cols)}, all tokens. */
  public static void rows1(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    for (int t = 0; t < tokens; t++) {
      t1r1(w, wOff, cols, x, t, out, outStride, o, tmp);
    }
  }

  private static void t3r2(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    int colsV = cols - cols % L;
    int pairs = colsV - colsV % (2 * L);
    int w0 = wOff;
    int w1 = wOff + cols;
    int x0 = t * cols;
    int x1 = x0 + cols;
    int x2 = x1 + cols;
    FloatVector e00 = FloatVector.zero(S);
    FloatVector e01 = FloatVector.zero(S);
    FloatVector e10 = FloatVector.zero(S);
    FloatVector e11 = FloatVector.zero(S);
    FloatVector e20 = FloatVector.zero(S);
    FloatVector e21 = FloatVector.zero(S);
    FloatVector d00 = FloatVector.zero(S);
    FloatVector d01 = FloatVector.zero(S);
    FloatVector d10 = FloatVector.zero(S);
    FloatVector d11 = FloatVector.zero(S);
    FloatVector d20 = FloatVector.zero(S);
    FloatVector d21 = FloatVector.zero(S);
    int i = 0;
    for (; i < pairs; i += 2 * L) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector v1 = FloatVector.fromArray(S, w, w1 + i);
      FloatVector u = FloatVector.fromArray(S, x, x0 + i);
      e00 = v0.fma(u, e00);
      e01 = v1.fma(u, e01);
      u = FloatVector.fromArray(S, x, x1 + i);
      e10 = v0.fma(u, e10);
      e11 = v1.fma(u, e11);
      u = FloatVector.fromArray(S, x, x2 + i);
      e20 = v0.fma(u, e20);
      e21 = v1.fma(u, e21);
      v0 = FloatVector.fromArray(S, w, w0 + i + L);
      v1 = FloatVector.fromArray(S, w, w1 + i + L);
      u = FloatVector.fromArray(S, x, x0 + i + L);
      d00 = v0.fma(u, d00);
      d01 = v1.fma(u, d01);
      u = FloatVector.fromArray(S, x, x1 + i + L);
      d10 = v0.fma(u, d10);
      d11 = v1.fma(u, d11);
      u = FloatVector.fromArray(S, x, x2 + i + L);
      d20 = v0.fma(u, d20);
      d21 = v1.fma(u, d21);
    }
    if (i < colsV) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector v1 = FloatVector.fromArray(S, w, w1 + i);
      FloatVector u = FloatVector.fromArray(S, x, x0 + i);
      e00 = v0.fma(u, e00);
      e01 = v1.fma(u, e01);
      u = FloatVector.fromArray(S, x, x1 + i);
      e10 = v0.fma(u, e10);
      e11 = v1.fma(u, e11);
      u = FloatVector.fromArray(S, x, x2 + i);
      e20 = v0.fma(u, e20);
      e21 = v1.fma(u, e21);
    }
    e00.add(d00).intoArray(tmp, 0);
    e01.add(d01).intoArray(tmp, 8);
    e10.add(d10).intoArray(tmp, 16);
    e11.add(d11).intoArray(tmp, 24);
    e20.add(d20).intoArray(tmp, 32);
    e21.add(d21).intoArray(tmp, 40);
    out[t * outStride + o] = finish(tmp, 0, w, w0, x, x0, colsV, cols);
    out[t * outStride + o + 1] = finish(tmp, 8, w, w1, x, x0, colsV, cols);
    out[(t + 1) * outStride + o] = finish(tmp, 16, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = finish(tmp, 24, w, w1, x, x1, colsV, cols);
    out[(t + 2) * outStride + o] = finish(tmp, 32, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = finish(tmp, 40, w, w1, x, x2, colsV, cols);
  }

  private static void t1r1(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    int colsV = cols - cols % L;
    int pairs = colsV - colsV % (2 * L);
    int x0 = t * cols;
    FloatVector even = FloatVector.zero(S);
    FloatVector odd = FloatVector.zero(S);
    int i = 0;
    for (; i < pairs; i += 2 * L) {
      even = FloatVector.fromArray(S, w, wOff + i).fma(FloatVector.fromArray(S, x, x0 + i), even);
      odd =
          FloatVector.fromArray(S, w, wOff + i + L)
              .fma(FloatVector.fromArray(S, x, x0 + i + L), odd);
    }
    if (i < colsV) {
      even = FloatVector.fromArray(S, w, wOff + i).fma(FloatVector.fromArray(S, x, x0 + i), even);
    }
    even.add(odd).intoArray(tmp, 0);
    out[t * outStride + o] = finish(tmp, 0, w, wOff, x, x0, colsV, cols);
  }
}
