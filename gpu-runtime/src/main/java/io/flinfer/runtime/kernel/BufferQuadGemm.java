package io.flinfer.runtime.kernel;

import java.nio.ByteBuffer;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Products of a few tokens with float32 weights read straight from their little-endian buffer (the
 * mapped file), in tiles of four rows by up to four tokens, for CPUs with the registers for them
 * ({@link QuadRowGemm#AVAILABLE}): what {@link HalfQuadGemm} does for 16-bit floats. Copying rows
 * into scratch first leaves the core reading no memory while it multiplies; here the loads of the
 * next weights overlap the multiply-adds. The four rows come from the four quarters of the range,
 * four sequential streams for the hardware prefetcher (as one token's rows, {@link
 * Gemm#bufferRows}).
 *
 * <p>Every output keeps {@link Gemm}'s order (one 8-lane accumulator over the row, lanes summed in
 * order, then the scalar tail), so a token gets the bits it gets alone or through copied rows.
 *
 * <p>Each tile size is its own method with its accumulators in named locals, as in {@link
 * QuadRowGemm}: vectors kept in arrays or handed to helpers are boxed under JDK 17.
 */
final class BufferQuadGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;

  /**
   * Batches of this many tokens or more go through copied rows: from 6 tokens on (a tile of four,
   * then one of two) the tiles measured level or behind (110M shape, both cores of an AVX-512 EPYC:
   * 2 tokens 86-91 -> 122-134 tokens/s, 4 tokens 153-163 -> 182-205, 6 tokens 186-188 -> 171-184).
   */
  static final int MAX_TOKENS = 5;

  private BufferQuadGemm() {}

  /**
   * Whether {@link #rows} takes a batch of {@code tokens}: a CPU with the registers, a small batch.
   */
  static boolean takes(int tokens) {
    return QuadRowGemm.AVAILABLE && tokens > 1 && tokens < MAX_TOKENS;
  }

  /**
   * Rows [oFrom, oTo) of the {@code cols}-column matrix {@code w} times {@code tokens} tokens of
   * {@code x}; {@code tmp} holds {@link Gemm#SCRATCH} floats. A quarter shorter than the first
   * repeats its last row, which writes the same output with the same bits again.
   */
  static void rows(
      ByteBuffer w,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp) {
    int quarter = (oTo - oFrom + 3) / 4;
    int last = oTo - 1;
    for (int o0 = oFrom; o0 < oFrom + quarter; o0++) {
      int o1 = Math.min(o0 + quarter, last);
      int o2 = Math.min(o0 + 2 * quarter, last);
      int o3 = Math.min(o0 + 3 * quarter, last);
      int t = 0;
      for (; t + 4 <= tokens; t += 4) {
        tokens4(w, cols, x, t, out, outStride, o0, o1, o2, o3, tmp);
      }
      for (; t + 2 <= tokens; t += 2) {
        tokens2(w, cols, x, t, out, outStride, o0, o1, o2, o3, tmp);
      }
      if (t < tokens) {
        GemmKernels.bufT1Q4(w, cols, x, t * cols, out, t * outStride, o0, o1, o2, o3, tmp);
      }
    }
  }

  private static void tokens4(
      ByteBuffer w,
      int cols,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    int colsV = cols - cols % L;
    int w0 = o0 * cols * 4;
    int w1 = o1 * cols * 4;
    int w2 = o2 * cols * 4;
    int w3 = o3 * cols * 4;
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
      FloatVector v0 = BufferLoads.floats(S, w, w0 + i * 4);
      FloatVector v1 = BufferLoads.floats(S, w, w1 + i * 4);
      FloatVector v2 = BufferLoads.floats(S, w, w2 + i * 4);
      FloatVector v3 = BufferLoads.floats(S, w, w3 + i * 4);
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
    finish(w, cols, x, t, 4, out, outStride, o0, o1, o2, o3, colsV, tmp);
  }

  private static void tokens2(
      ByteBuffer w,
      int cols,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    int colsV = cols - cols % L;
    int w0 = o0 * cols * 4;
    int w1 = o1 * cols * 4;
    int w2 = o2 * cols * 4;
    int w3 = o3 * cols * 4;
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
      FloatVector v0 = BufferLoads.floats(S, w, w0 + i * 4);
      FloatVector v1 = BufferLoads.floats(S, w, w1 + i * 4);
      FloatVector v2 = BufferLoads.floats(S, w, w2 + i * 4);
      FloatVector v3 = BufferLoads.floats(S, w, w3 + i * 4);
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
    finish(w, cols, x, t, 2, out, outStride, o0, o1, o2, o3, colsV, tmp);
  }

  /**
   * Outputs of tokens [t, t + tokens) and rows {@code o} from their accumulators' lanes in {@code
   * tmp} (token-major, eight floats each) and the rows' scalar tails.
   */
  private static void finish(
      ByteBuffer w,
      int cols,
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
      int xRow = (t + k) * cols;
      out[at + o0] = GemmKernels.finishBuffer(tmp, 32 * k, w, o0 * cols * 4, x, xRow, colsV, cols);
      out[at + o1] =
          GemmKernels.finishBuffer(tmp, 32 * k + 8, w, o1 * cols * 4, x, xRow, colsV, cols);
      out[at + o2] =
          GemmKernels.finishBuffer(tmp, 32 * k + 16, w, o2 * cols * 4, x, xRow, colsV, cols);
      out[at + o3] =
          GemmKernels.finishBuffer(tmp, 32 * k + 24, w, o3 * cols * 4, x, xRow, colsV, cols);
    }
  }
}
