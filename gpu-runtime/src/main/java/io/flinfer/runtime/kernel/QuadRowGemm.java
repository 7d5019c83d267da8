package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Tiles of tokens x four decoded rows, for CPUs whose vector registers hold them: a 4 x 4 tile
 * keeps 16 accumulators, four rows and a token in registers, which needs AVX-512's 32 registers
 * (AVX2's 16 would spill). Each activation vector loaded serves four rows instead of {@link
 * GemmKernels}' two, which halves what a batch reads of its activations per row: a 4 x 4 tile ran
 * 76-100 GFLOP/s on one core of an AVX-512 EPYC where the 6 x 2 and 4 x 2 tiles ran 48-71 (32
 * tokens, 768 to 2048 columns; a harness outside the repository).
 *
 * <p>Every output keeps {@link Gemm}'s order (one 8-lane accumulator over the row, lanes summed in
 * order, then the scalar tail), so these tiles give each output the bits the two-row tiles give.
 */
final class QuadRowGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;

  /** Whether this CPU has the registers for four-row tiles (AVX-512: 32 vector registers). */
  static final boolean AVAILABLE = FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512;

  private QuadRowGemm() {}

  /** Four decoded rows at {@code w[wOff..]} (rows o .. o + 3), all tokens. */
  static void rows4(
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
    for (; t + 4 <= tokens; t += 4) {
      t4r4(w, wOff, cols, x, t, out, outStride, o, tmp);
    }
    for (; t + 2 <= tokens; t += 2) {
      t2r4(w, wOff, cols, x, t, out, outStride, o, tmp);
    }
    for (; t < tokens; t++) {
      t1r4(w, wOff, cols, x, t, out, outStride, o, tmp);
    }
  }

  private static void t4r4(
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
    int w0 = wOff + 0 * cols;
    int w1 = wOff + 1 * cols;
    int w2 = wOff + 2 * cols;
    int w3 = wOff + 3 * cols;
    int x0 = (t + 0) * cols;
    int x1 = (t + 1) * cols;
    int x2 = (t + 2) * cols;
    int x3 = (t + 3) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    FloatVector a02 = FloatVector.zero(S);
    FloatVector a03 = FloatVector.zero(S);
    FloatVector a10 = FloatVector.zero(S);
    FloatVector a11 = FloatVector.zero(S);
    FloatVector a12 = FloatVector.zero(S);
    FloatVector a13 = FloatVector.zero(S);
    FloatVector a20 = FloatVector.zero(S);
    FloatVector a21 = FloatVector.zero(S);
    FloatVector a22 = FloatVector.zero(S);
    FloatVector a23 = FloatVector.zero(S);
    FloatVector a30 = FloatVector.zero(S);
    FloatVector a31 = FloatVector.zero(S);
    FloatVector a32 = FloatVector.zero(S);
    FloatVector a33 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += L) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector v1 = FloatVector.fromArray(S, w, w1 + i);
      FloatVector v2 = FloatVector.fromArray(S, w, w2 + i);
      FloatVector v3 = FloatVector.fromArray(S, w, w3 + i);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
      a02 = v2.fma(u0, a02);
      a03 = v3.fma(u0, a03);
      FloatVector u1 = FloatVector.fromArray(S, x, x1 + i);
      a10 = v0.fma(u1, a10);
      a11 = v1.fma(u1, a11);
      a12 = v2.fma(u1, a12);
      a13 = v3.fma(u1, a13);
      FloatVector u2 = FloatVector.fromArray(S, x, x2 + i);
      a20 = v0.fma(u2, a20);
      a21 = v1.fma(u2, a21);
      a22 = v2.fma(u2, a22);
      a23 = v3.fma(u2, a23);
      FloatVector u3 = FloatVector.fromArray(S, x, x3 + i);
      a30 = v0.fma(u3, a30);
      a31 = v1.fma(u3, a31);
      a32 = v2.fma(u3, a32);
      a33 = v3.fma(u3, a33);
    }
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    a02.intoArray(tmp, 16);
    a03.intoArray(tmp, 24);
    a10.intoArray(tmp, 32);
    a11.intoArray(tmp, 40);
    a12.intoArray(tmp, 48);
    a13.intoArray(tmp, 56);
    a20.intoArray(tmp, 64);
    a21.intoArray(tmp, 72);
    a22.intoArray(tmp, 80);
    a23.intoArray(tmp, 88);
    a30.intoArray(tmp, 96);
    a31.intoArray(tmp, 104);
    a32.intoArray(tmp, 112);
    a33.intoArray(tmp, 120);
    out[(t + 0) * outStride + o + 0] = GemmKernels.finishArray(tmp, 0, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = GemmKernels.finishArray(tmp, 8, w, w1, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 2] = GemmKernels.finishArray(tmp, 16, w, w2, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 3] = GemmKernels.finishArray(tmp, 24, w, w3, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = GemmKernels.finishArray(tmp, 32, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = GemmKernels.finishArray(tmp, 40, w, w1, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 2] = GemmKernels.finishArray(tmp, 48, w, w2, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 3] = GemmKernels.finishArray(tmp, 56, w, w3, x, x1, colsV, cols);
    out[(t + 2) * outStride + o + 0] = GemmKernels.finishArray(tmp, 64, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = GemmKernels.finishArray(tmp, 72, w, w1, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 2] = GemmKernels.finishArray(tmp, 80, w, w2, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 3] = GemmKernels.finishArray(tmp, 88, w, w3, x, x2, colsV, cols);
    out[(t + 3) * outStride + o + 0] = GemmKernels.finishArray(tmp, 96, w, w0, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 1] = GemmKernels.finishArray(tmp, 104, w, w1, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 2] = GemmKernels.finishArray(tmp, 112, w, w2, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 3] = GemmKernels.finishArray(tmp, 120, w, w3, x, x3, colsV, cols);
  }

  private static void t2r4(
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
    int w0 = wOff + 0 * cols;
    int w1 = wOff + 1 * cols;
    int w2 = wOff + 2 * cols;
    int w3 = wOff + 3 * cols;
    int x0 = (t + 0) * cols;
    int x1 = (t + 1) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    FloatVector a02 = FloatVector.zero(S);
    FloatVector a03 = FloatVector.zero(S);
    FloatVector a10 = FloatVector.zero(S);
    FloatVector a11 = FloatVector.zero(S);
    FloatVector a12 = FloatVector.zero(S);
    FloatVector a13 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += L) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector v1 = FloatVector.fromArray(S, w, w1 + i);
      FloatVector v2 = FloatVector.fromArray(S, w, w2 + i);
      FloatVector v3 = FloatVector.fromArray(S, w, w3 + i);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
      a02 = v2.fma(u0, a02);
      a03 = v3.fma(u0, a03);
      FloatVector u1 = FloatVector.fromArray(S, x, x1 + i);
      a10 = v0.fma(u1, a10);
      a11 = v1.fma(u1, a11);
      a12 = v2.fma(u1, a12);
      a13 = v3.fma(u1, a13);
    }
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    a02.intoArray(tmp, 16);
    a03.intoArray(tmp, 24);
    a10.intoArray(tmp, 32);
    a11.intoArray(tmp, 40);
    a12.intoArray(tmp, 48);
    a13.intoArray(tmp, 56);
    out[(t + 0) * outStride + o + 0] = GemmKernels.finishArray(tmp, 0, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = GemmKernels.finishArray(tmp, 8, w, w1, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 2] = GemmKernels.finishArray(tmp, 16, w, w2, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 3] = GemmKernels.finishArray(tmp, 24, w, w3, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = GemmKernels.finishArray(tmp, 32, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = GemmKernels.finishArray(tmp, 40, w, w1, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 2] = GemmKernels.finishArray(tmp, 48, w, w2, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 3] = GemmKernels.finishArray(tmp, 56, w, w3, x, x1, colsV, cols);
  }

  private static void t1r4(
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
    int w0 = wOff + 0 * cols;
    int w1 = wOff + 1 * cols;
    int w2 = wOff + 2 * cols;
    int w3 = wOff + 3 * cols;
    int x0 = (t + 0) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    FloatVector a02 = FloatVector.zero(S);
    FloatVector a03 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += L) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector v1 = FloatVector.fromArray(S, w, w1 + i);
      FloatVector v2 = FloatVector.fromArray(S, w, w2 + i);
      FloatVector v3 = FloatVector.fromArray(S, w, w3 + i);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
      a02 = v2.fma(u0, a02);
      a03 = v3.fma(u0, a03);
    }
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    a02.intoArray(tmp, 16);
    a03.intoArray(tmp, 24);
    out[(t + 0) * outStride + o + 0] = GemmKernels.finishArray(tmp, 0, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = GemmKernels.finishArray(tmp, 8, w, w1, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 2] = GemmKernels.finishArray(tmp, 16, w, w2, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 3] = GemmKernels.finishArray(tmp, 24, w, w3, x, x0, colsV, cols);
  }
}
