package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Products of a few tokens with 16-bit float weights ({@link HalfWeights}) converted in vector
 * registers as they stream past, in tiles of four rows by up to four tokens, for CPUs with the
 * registers for them ({@link QuadRowGemm#AVAILABLE}). A small batch spends as long decoding rows
 * into scratch as multiplying them, and a core reads no memory while it multiplies; converting in
 * the tile lets the loads of the next weights overlap the multiply-adds. The four rows come from
 * the four quarters of the range, so that the hardware prefetcher follows four sequential streams
 * (as {@link HalfGemm} does for one token). Eight tokens of 19,456 x 896 halves from memory, both
 * cores of an AVX-512 EPYC: 31-32 billion multiply-adds a second through decoded rows, 36-37 here;
 * four tokens 22-23 against 35; sixteen level (45), so a batch of {@link #MAX_TOKENS} or more
 * decodes.
 *
 * <p>Each tile size is its own method with its accumulators in named locals, as in {@link
 * QuadRowGemm}: vectors kept in arrays or handed to helpers are boxed under JDK 17.
 *
 * <p>Every output keeps {@link Gemm}'s order (one 8-lane accumulator over the row, lanes summed in
 * order, then the scalar tail), so a token gets the bits it gets alone or through decoded rows.
 */
final class HalfQuadGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;

  /** Batches of this many tokens or more go through decoded rows. */
  static final int MAX_TOKENS = 16;

  private HalfQuadGemm() {}

  /**
   * Whether {@link #rows} takes a batch of {@code tokens} with weights {@code w}: a CPU with the
   * registers, a small batch, and bfloat16 or halves with no infinity or NaN.
   */
  static boolean takes(HalfWeights w, int tokens) {
    return QuadRowGemm.AVAILABLE
        && tokens > 1
        && tokens < MAX_TOKENS
        && (w.isBf16() || w.finiteHalves());
  }

  /**
   * Rows [oFrom, oTo) of {@code w} times {@code tokens} tokens of {@code x}; {@code tmp} holds
   * {@link Gemm#SCRATCH} floats. A quarter shorter than the first repeats its last row, which
   * writes the same output with the same bits again.
   */
  static void rows(
      HalfWeights w,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp) {
    // Halves convert without their final product where the tokens carry it (scaledForMoved).
    float[] moved =
        w.isBf16() || w.cols() % L != 0
            ? null
            : HalfVectors.scaledForMoved(x, 0, tokens * w.cols());
    float[] xv = moved != null ? moved : x;
    int quarter = (oTo - oFrom + 3) / 4;
    int last = oTo - 1;
    for (int o0 = oFrom; o0 < oFrom + quarter; o0++) {
      int o1 = Math.min(o0 + quarter, last);
      int o2 = Math.min(o0 + 2 * quarter, last);
      int o3 = Math.min(o0 + 3 * quarter, last);
      int t = 0;
      for (; t + 4 <= tokens; t += 4) {
        t4r4(w, xv, moved != null, t, out, outStride, o0, o1, o2, o3, tmp);
      }
      for (; t + 2 <= tokens; t += 2) {
        t2r4(w, xv, moved != null, t, out, outStride, o0, o1, o2, o3, tmp);
      }
      if (t < tokens) {
        HalfGemm.rows4(w, xv, t * w.cols(), moved != null, out, t * outStride, o0, o1, o2, o3, tmp);
      }
    }
  }

  private static void t4r4(
      HalfWeights w,
      float[] x,
      boolean moved,
      int t,
      float[] out,
      int outStride,
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
    int x0 = (t + 0) * cols;
    int x1 = (t + 1) * cols;
    int x2 = (t + 2) * cols;
    int x3 = (t + 3) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = a00;
    FloatVector a02 = a00;
    FloatVector a03 = a00;
    FloatVector a10 = a00;
    FloatVector a11 = a00;
    FloatVector a12 = a00;
    FloatVector a13 = a00;
    FloatVector a20 = a00;
    FloatVector a21 = a00;
    FloatVector a22 = a00;
    FloatVector a23 = a00;
    FloatVector a30 = a00;
    FloatVector a31 = a00;
    FloatVector a32 = a00;
    FloatVector a33 = a00;
    for (int i = 0; i < colsV; i += L) {
      FloatVector v0 =
          (bf16
              ? HalfVectors.bf16(h, r0 + i)
              : moved ? HalfVectors.fp16Moved(h, r0 + i) : HalfVectors.fp16Finite(h, r0 + i));
      FloatVector v1 =
          (bf16
              ? HalfVectors.bf16(h, r1 + i)
              : moved ? HalfVectors.fp16Moved(h, r1 + i) : HalfVectors.fp16Finite(h, r1 + i));
      FloatVector v2 =
          (bf16
              ? HalfVectors.bf16(h, r2 + i)
              : moved ? HalfVectors.fp16Moved(h, r2 + i) : HalfVectors.fp16Finite(h, r2 + i));
      FloatVector v3 =
          (bf16
              ? HalfVectors.bf16(h, r3 + i)
              : moved ? HalfVectors.fp16Moved(h, r3 + i) : HalfVectors.fp16Finite(h, r3 + i));
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
    // Through the scratch: vectors handed to a helper would be boxed.
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
    finish(w, x, t, 4, out, outStride, o0, o1, o2, o3, colsV, tmp);
  }

  private static void t2r4(
      HalfWeights w,
      float[] x,
      boolean moved,
      int t,
      float[] out,
      int outStride,
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
    int x0 = (t + 0) * cols;
    int x1 = (t + 1) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = a00;
    FloatVector a02 = a00;
    FloatVector a03 = a00;
    FloatVector a10 = a00;
    FloatVector a11 = a00;
    FloatVector a12 = a00;
    FloatVector a13 = a00;
    for (int i = 0; i < colsV; i += L) {
      FloatVector v0 =
          (bf16
              ? HalfVectors.bf16(h, r0 + i)
              : moved ? HalfVectors.fp16Moved(h, r0 + i) : HalfVectors.fp16Finite(h, r0 + i));
      FloatVector v1 =
          (bf16
              ? HalfVectors.bf16(h, r1 + i)
              : moved ? HalfVectors.fp16Moved(h, r1 + i) : HalfVectors.fp16Finite(h, r1 + i));
      FloatVector v2 =
          (bf16
              ? HalfVectors.bf16(h, r2 + i)
              : moved ? HalfVectors.fp16Moved(h, r2 + i) : HalfVectors.fp16Finite(h, r2 + i));
      FloatVector v3 =
          (bf16
              ? HalfVectors.bf16(h, r3 + i)
              : moved ? HalfVectors.fp16Moved(h, r3 + i) : HalfVectors.fp16Finite(h, r3 + i));
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
    // Through the scratch: vectors handed to a helper would be boxed.
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    a02.intoArray(tmp, 16);
    a03.intoArray(tmp, 24);
    a10.intoArray(tmp, 32);
    a11.intoArray(tmp, 40);
    a12.intoArray(tmp, 48);
    a13.intoArray(tmp, 56);
    finish(w, x, t, 2, out, outStride, o0, o1, o2, o3, colsV, tmp);
  }

  /**
   * Outputs of tokens [t, t + tokens) and rows {@code o} from their accumulators' lanes in {@code
   * tmp} (token-major, eight floats each), as {@link HalfGemm} finishes a row.
   */
  private static void finish(
      HalfWeights w,
      float[] x,
      int t,
      int tokens,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      int colsV,
      float[] tmp) {
    for (int k = 0; k < tokens; k++) {
      int at = (t + k) * outStride;
      int xRow = (t + k) * w.cols();
      out[at + o0] = HalfGemm.finish(w, o0, tmp, 8 * (4 * k), x, xRow, colsV);
      out[at + o1] = HalfGemm.finish(w, o1, tmp, 8 * (4 * k + 1), x, xRow, colsV);
      out[at + o2] = HalfGemm.finish(w, o2, tmp, 8 * (4 * k + 2), x, xRow, colsV);
      out[at + o3] = HalfGemm.finish(w, o3, tmp, 8 * (4 * k + 3), x, xRow, colsV);
    }
  }
}
