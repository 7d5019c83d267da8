package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Products of a few tokens with Q8_0 and Q4_0 weights ({@link BlockWeights}) converted in vector
 * registers as they stream past, in tiles of four rows by up to four tokens, for CPUs with the
 * registers for them ({@link QuadRowGemm#AVAILABLE}): what {@link HalfQuadGemm} does for 16-bit
 * floats. Decoding rows into scratch first leaves the core reading no memory while it multiplies;
 * here the loads of the next blocks overlap the multiply-adds. The four rows come from the four
 * quarters of the range, four sequential streams for the hardware prefetcher.
 *
 * <p>Each weight is {@code scale * value} rounded once, as {@link BlockWeights#decodeRow} gives it,
 * and every output keeps {@link Gemm}'s order (one 8-lane accumulator over the row, lanes summed in
 * order; a row is whole blocks, so there is no tail): a token gets the bits it gets alone or
 * through decoded rows.
 *
 * <p>Each tile size and format is its own method with its accumulators in named locals, as in
 * {@link QuadRowGemm}: vectors kept in arrays or handed to helpers are boxed under JDK 17.
 */
final class BlockQuadGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;
  private static final int BLOCK = BlockGemm.BLOCK;

  /** Bytes of a Q4_0 block's values, byte j holding value j and value j + 16. */
  private static final int HALF = BLOCK / 2;

  /** Q8_0 batches of this many tokens or more go through decoded rows. */
  static final int MAX_TOKENS = 16;

  /**
   * Q4_0 batches of this many tokens or more go through decoded rows: cutting nibbles takes more
   * instructions than widening bytes, and the tiles repeat them for every four tokens (110M shape,
   * both cores of an AVX-512 EPYC: 2 tokens 149-151 -> 193-208 tokens/s, 4 tokens 266-290 ->
   * 314-319, but 6 tokens level and 8 tokens behind).
   */
  static final int MAX_NIBBLE_TOKENS = 5;

  private BlockQuadGemm() {}

  /**
   * Whether {@link #rows} takes a batch of {@code tokens} with weights {@code w}: a CPU with the
   * registers, a small batch.
   */
  static boolean takes(BlockWeights w, int tokens) {
    return QuadRowGemm.AVAILABLE
        && tokens > 1
        && tokens < (w.nibbles() ? MAX_NIBBLE_TOKENS : MAX_TOKENS);
  }

  /**
   * Rows [oFrom, oTo) of {@code w} times {@code tokens} tokens of {@code x}; {@code tmp} holds
   * {@link Gemm#SCRATCH} floats. A quarter shorter than the first repeats its last row, which
   * writes the same output with the same bits again.
   */
  static void rows(
      BlockWeights w,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp) {
    int quarter = (oTo - oFrom + 3) / 4;
    int last = oTo - 1;
    boolean nibbles = w.nibbles();
    for (int o0 = oFrom; o0 < oFrom + quarter; o0++) {
      int o1 = Math.min(o0 + quarter, last);
      int o2 = Math.min(o0 + 2 * quarter, last);
      int o3 = Math.min(o0 + 3 * quarter, last);
      int t = 0;
      for (; t + 4 <= tokens; t += 4) {
        if (nibbles) {
          q4Tokens4(w, x, t, out, outStride, o0, o1, o2, o3, tmp);
        } else {
          q8Tokens4(w, x, t, out, outStride, o0, o1, o2, o3, tmp);
        }
      }
      for (; t + 2 <= tokens; t += 2) {
        if (nibbles) {
          q4Tokens2(w, x, t, out, outStride, o0, o1, o2, o3, tmp);
        } else {
          q8Tokens2(w, x, t, out, outStride, o0, o1, o2, o3, tmp);
        }
      }
      if (t < tokens) {
        BlockGemm.rows4(w, x, t * w.cols(), o0, o1, o2, o3, tmp);
        GemmKernels.finishQuad(t, 1, out, outStride, o0, o1, o2, o3, tmp);
      }
    }
  }

  private static void q8Tokens4(
      BlockWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    byte[] q = w.quants();
    float[] d = w.scales();
    int cols = w.cols();
    int blocks = cols / BLOCK;
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
    for (int b = 0; b < blocks; b++) {
      float s0 = d[o0 * blocks + b];
      float s1 = d[o1 * blocks + b];
      float s2 = d[o2 * blocks + b];
      float s3 = d[o3 * blocks + b];
      for (int j = 0; j < BLOCK; j += L) {
        int i = b * BLOCK + j;
        FloatVector v0 = BlockGemm.int8(q, o0 * cols + i).mul(s0);
        FloatVector v1 = BlockGemm.int8(q, o1 * cols + i).mul(s1);
        FloatVector v2 = BlockGemm.int8(q, o2 * cols + i).mul(s2);
        FloatVector v3 = BlockGemm.int8(q, o3 * cols + i).mul(s3);
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
    GemmKernels.finishQuad(t, 4, out, outStride, o0, o1, o2, o3, tmp);
  }

  private static void q8Tokens2(
      BlockWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    byte[] q = w.quants();
    float[] d = w.scales();
    int cols = w.cols();
    int blocks = cols / BLOCK;
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
    for (int b = 0; b < blocks; b++) {
      float s0 = d[o0 * blocks + b];
      float s1 = d[o1 * blocks + b];
      float s2 = d[o2 * blocks + b];
      float s3 = d[o3 * blocks + b];
      for (int j = 0; j < BLOCK; j += L) {
        int i = b * BLOCK + j;
        FloatVector v0 = BlockGemm.int8(q, o0 * cols + i).mul(s0);
        FloatVector v1 = BlockGemm.int8(q, o1 * cols + i).mul(s1);
        FloatVector v2 = BlockGemm.int8(q, o2 * cols + i).mul(s2);
        FloatVector v3 = BlockGemm.int8(q, o3 * cols + i).mul(s3);
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
    GemmKernels.finishQuad(t, 2, out, outStride, o0, o1, o2, o3, tmp);
  }

  private static void q4Tokens4(
      BlockWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    byte[] q = w.quants();
    float[] d = w.scales();
    int cols = w.cols();
    int blocks = cols / BLOCK;
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
    for (int b = 0; b < blocks; b++) {
      int i = b * BLOCK;
      float s0 = d[o0 * blocks + b];
      int p0 = (o0 * blocks + b) * HALF;
      float s1 = d[o1 * blocks + b];
      int p1 = (o1 * blocks + b) * HALF;
      float s2 = d[o2 * blocks + b];
      int p2 = (o2 * blocks + b) * HALF;
      float s3 = d[o3 * blocks + b];
      int p3 = (o3 * blocks + b) * HALF;
      for (int j = 0; j < BLOCK; j += L) {
        FloatVector v0 = BlockGemm.part(q, p0, j, true).mul(s0);
        FloatVector v1 = BlockGemm.part(q, p1, j, true).mul(s1);
        FloatVector v2 = BlockGemm.part(q, p2, j, true).mul(s2);
        FloatVector v3 = BlockGemm.part(q, p3, j, true).mul(s3);
        FloatVector u0 = FloatVector.fromArray(S, x, x0 + i + j);
        a00 = v0.fma(u0, a00);
        a01 = v1.fma(u0, a01);
        a02 = v2.fma(u0, a02);
        a03 = v3.fma(u0, a03);
        FloatVector u1 = FloatVector.fromArray(S, x, x1 + i + j);
        a10 = v0.fma(u1, a10);
        a11 = v1.fma(u1, a11);
        a12 = v2.fma(u1, a12);
        a13 = v3.fma(u1, a13);
        FloatVector u2 = FloatVector.fromArray(S, x, x2 + i + j);
        a20 = v0.fma(u2, a20);
        a21 = v1.fma(u2, a21);
        a22 = v2.fma(u2, a22);
        a23 = v3.fma(u2, a23);
        FloatVector u3 = FloatVector.fromArray(S, x, x3 + i + j);
        a30 = v0.fma(u3, a30);
        a31 = v1.fma(u3, a31);
        a32 = v2.fma(u3, a32);
        a33 = v3.fma(u3, a33);
      }
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
    GemmKernels.finishQuad(t, 4, out, outStride, o0, o1, o2, o3, tmp);
  }

  private static void q4Tokens2(
      BlockWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    byte[] q = w.quants();
    float[] d = w.scales();
    int cols = w.cols();
    int blocks = cols / BLOCK;
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
    for (int b = 0; b < blocks; b++) {
      int i = b * BLOCK;
      float s0 = d[o0 * blocks + b];
      int p0 = (o0 * blocks + b) * HALF;
      float s1 = d[o1 * blocks + b];
      int p1 = (o1 * blocks + b) * HALF;
      float s2 = d[o2 * blocks + b];
      int p2 = (o2 * blocks + b) * HALF;
      float s3 = d[o3 * blocks + b];
      int p3 = (o3 * blocks + b) * HALF;
      for (int j = 0; j < BLOCK; j += L) {
        FloatVector v0 = BlockGemm.part(q, p0, j, true).mul(s0);
        FloatVector v1 = BlockGemm.part(q, p1, j, true).mul(s1);
        FloatVector v2 = BlockGemm.part(q, p2, j, true).mul(s2);
        FloatVector v3 = BlockGemm.part(q, p3, j, true).mul(s3);
        FloatVector u0 = FloatVector.fromArray(S, x, x0 + i + j);
        a00 = v0.fma(u0, a00);
        a01 = v1.fma(u0, a01);
        a02 = v2.fma(u0, a02);
        a03 = v3.fma(u0, a03);
        FloatVector u1 = FloatVector.fromArray(S, x, x1 + i + j);
        a10 = v0.fma(u1, a10);
        a11 = v1.fma(u1, a11);
        a12 = v2.fma(u1, a12);
        a13 = v3.fma(u1, a13);
      }
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
    GemmKernels.finishQuad(t, 2, out, outStride, o0, o1, o2, o3, tmp);
  }
}
