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
    int colsV = cols - cols % L;
    int t = 0;
    for (; t + 4 <= tokens; t += 4) {
      lanes4x4(w, wOff, cols, x, t * cols, cols, colsV, tmp, 0, L);
      finish(w, wOff, cols, colsV, x, t, 4, out, outStride, o, tmp);
    }
    for (; t + 2 <= tokens; t += 2) {
      lanes2x4(w, wOff, cols, x, t * cols, cols, colsV, tmp, 0, L);
      finish(w, wOff, cols, colsV, x, t, 2, out, outStride, o, tmp);
    }
    for (; t < tokens; t++) {
      lanes1x4(w, wOff, cols, x, t * cols, cols, colsV, tmp, 0, L);
      finish(w, wOff, cols, colsV, x, t, 1, out, outStride, o, tmp);
    }
  }

  /** The outputs of a tile of four rows by {@code tokens} from its lanes in {@code tmp}. */
  private static void finish(
      float[] w,
      int wOff,
      int cols,
      int colsV,
      float[] x,
      int t,
      int tokens,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    for (int j = 0; j < tokens; j++) {
      for (int r = 0; r < 4; r++) {
        out[(t + j) * outStride + o + r] =
            GemmKernels.finishArray(
                tmp, L * (4 * j + r), w, wOff + r * cols, x, (t + j) * cols, colsV, cols);
      }
    }
  }

  /**
   * Rows {@code w0 + r * wStride} (r &lt; 4) times tokens {@code x0 + j * xStride} (j &lt; 4) over
   * columns [0, {@code length}), a multiple of the lanes: output (row r, token j)'s 8 lanes into
   * {@code lanes[l + (4 * j + r) * stride..]}.
   */
  static void lanes4x4(
      float[] w,
      int w0,
      int wStride,
      float[] x,
      int x0,
      int xStride,
      int length,
      float[] lanes,
      int l,
      int stride) {
    int w1 = w0 + wStride;
    int w2 = w1 + wStride;
    int w3 = w2 + wStride;
    int x1 = x0 + xStride;
    int x2 = x1 + xStride;
    int x3 = x2 + xStride;
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
    for (int i = 0; i < length; i += L) {
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
    a00.intoArray(lanes, l);
    a01.intoArray(lanes, l + stride);
    a02.intoArray(lanes, l + 2 * stride);
    a03.intoArray(lanes, l + 3 * stride);
    a10.intoArray(lanes, l + 4 * stride);
    a11.intoArray(lanes, l + 5 * stride);
    a12.intoArray(lanes, l + 6 * stride);
    a13.intoArray(lanes, l + 7 * stride);
    a20.intoArray(lanes, l + 8 * stride);
    a21.intoArray(lanes, l + 9 * stride);
    a22.intoArray(lanes, l + 10 * stride);
    a23.intoArray(lanes, l + 11 * stride);
    a30.intoArray(lanes, l + 12 * stride);
    a31.intoArray(lanes, l + 13 * stride);
    a32.intoArray(lanes, l + 14 * stride);
    a33.intoArray(lanes, l + 15 * stride);
  }

  /**
   * Rows {@code w0 + r * wStride} (r &lt; 4) times tokens {@code x0 + j * xStride} (j &lt; 2) over
   * columns [0, {@code length}), a multiple of the lanes: output (row r, token j)'s 8 lanes into
   * {@code lanes[l + (4 * j + r) * stride..]}.
   */
  static void lanes2x4(
      float[] w,
      int w0,
      int wStride,
      float[] x,
      int x0,
      int xStride,
      int length,
      float[] lanes,
      int l,
      int stride) {
    int w1 = w0 + wStride;
    int w2 = w1 + wStride;
    int w3 = w2 + wStride;
    int x1 = x0 + xStride;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    FloatVector a02 = FloatVector.zero(S);
    FloatVector a03 = FloatVector.zero(S);
    FloatVector a10 = FloatVector.zero(S);
    FloatVector a11 = FloatVector.zero(S);
    FloatVector a12 = FloatVector.zero(S);
    FloatVector a13 = FloatVector.zero(S);
    for (int i = 0; i < length; i += L) {
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
    a00.intoArray(lanes, l);
    a01.intoArray(lanes, l + stride);
    a02.intoArray(lanes, l + 2 * stride);
    a03.intoArray(lanes, l + 3 * stride);
    a10.intoArray(lanes, l + 4 * stride);
    a11.intoArray(lanes, l + 5 * stride);
    a12.intoArray(lanes, l + 6 * stride);
    a13.intoArray(lanes, l + 7 * stride);
  }

  /**
   * Rows {@code w0 + r * wStride} (r &lt; 4) times tokens {@code x0 + j * xStride} (j &lt; 1) over
   * columns [0, {@code length}), a multiple of the lanes: output (row r, token j)'s 8 lanes into
   * {@code lanes[l + (4 * j + r) * stride..]}.
   */
  static void lanes1x4(
      float[] w,
      int w0,
      int wStride,
      float[] x,
      int x0,
      int xStride,
      int length,
      float[] lanes,
      int l,
      int stride) {
    int w1 = w0 + wStride;
    int w2 = w1 + wStride;
    int w3 = w2 + wStride;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    FloatVector a02 = FloatVector.zero(S);
    FloatVector a03 = FloatVector.zero(S);
    for (int i = 0; i < length; i += L) {
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
    a00.intoArray(lanes, l);
    a01.intoArray(lanes, l + stride);
    a02.intoArray(lanes, l + 2 * stride);
    a03.intoArray(lanes, l + 3 * stride);
  }
}
