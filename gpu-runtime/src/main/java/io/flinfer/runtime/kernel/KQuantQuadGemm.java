package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Products of a few tokens with Q4_K and Q6_K weights ({@link KQuantWeights}) converted in vector
 * registers as they stream past, in tiles of four rows by up to four tokens (two for Q4_K), for
 * CPUs with the registers for them ({@link QuadRowGemm#AVAILABLE}): what {@link BlockQuadGemm} does
 * for Q8_0 and Q4_0. The four rows come from the four quarters of the range, four sequential
 * streams for the hardware prefetcher.
 *
 * <p>Each weight is rounded as {@link KQuantWeights#decodeRow} rounds it, and every output keeps
 * {@link Gemm}'s order (one 8-lane accumulator over the row, lanes summed in order; a row is whole
 * super-blocks, so there is no tail): a token gets the bits it gets alone or through decoded rows.
 *
 * <p>Each tile size and format is its own method with its accumulators in named locals, as in
 * {@link QuadRowGemm}: vectors kept in arrays or handed to helpers are boxed under JDK 17.
 */
final class KQuantQuadGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;
  private static final int SUPER = KQuantWeights.SUPER;

  /**
   * Q6_K batches of this many tokens or more go through decoded rows: the tiles measured level at 8
   * tokens and behind at 12 (110M Q6_K, both cores of an AVX-512 EPYC: 8 tokens 298-310 -> 312-317
   * tokens/s, 12 tokens 337-371 -> 308-327), its scale changing every 16 values.
   */
  static final int MAX_TOKENS = 8;

  /**
   * Q4_K batches of this many tokens or more go through decoded rows, so Q4_K tiles take two
   * tokens: cutting nibbles in every tile costs more than decoding the rows once from three tokens
   * on (110M Q4_K_M, both cores of an AVX-512 EPYC: 2 tokens 127-141 -> 166-182 tokens/s, 3 tokens
   * 138-162 -> 132-153). A tile of four Q4_K tokens, which measured 278-294 against 222-239 at 4
   * tokens, is too large a method for C2 to compile whole every time (past its node count it boxed
   * the accumulators in some runs, 55-69 tokens/s), so there is none.
   */
  static final int MAX_NIBBLE_TOKENS = 3;

  private KQuantQuadGemm() {}

  /**
   * Whether {@link #rows} takes a batch of {@code tokens} with weights {@code w}: Q4_K or Q6_K, a
   * CPU with the registers, a small batch.
   */
  static boolean takes(KQuantWeights w, int tokens) {
    KQuantWeights.Format f = w.format();
    return QuadRowGemm.AVAILABLE
        && f != KQuantWeights.Format.Q5_K
        && f != KQuantWeights.Format.Q2_K
        && tokens > 1
        && tokens < (f == KQuantWeights.Format.Q6_K ? MAX_TOKENS : MAX_NIBBLE_TOKENS);
  }

  /**
   * Rows [oFrom, oTo) of {@code w} times {@code tokens} tokens of {@code x}; {@code tmp} holds
   * {@link Gemm#SCRATCH} floats. A quarter shorter than the first repeats its last row, which
   * writes the same output with the same bits again.
   */
  static void rows(
      KQuantWeights w,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp) {
    int quarter = (oTo - oFrom + 3) / 4;
    int last = oTo - 1;
    boolean q6k = w.format() == KQuantWeights.Format.Q6_K;
    for (int o0 = oFrom; o0 < oFrom + quarter; o0++) {
      int o1 = Math.min(o0 + quarter, last);
      int o2 = Math.min(o0 + 2 * quarter, last);
      int o3 = Math.min(o0 + 3 * quarter, last);
      int t = 0;
      for (; q6k && t + 4 <= tokens; t += 4) {
        q6kTokens4(w, x, t, out, outStride, o0, o1, o2, o3, tmp);
      }
      for (; t + 2 <= tokens; t += 2) {
        if (q6k) {
          q6kTokens2(w, x, t, out, outStride, o0, o1, o2, o3, tmp);
        } else {
          q4kTokens2(w, x, t, out, outStride, o0, o1, o2, o3, tmp);
        }
      }
      if (t < tokens) {
        KQuantGemm.rows4(w, x, t * w.cols(), o0, o1, o2, o3, tmp);
        GemmKernels.finishQuad(t, 1, out, outStride, o0, o1, o2, o3, tmp);
      }
    }
  }

  private static void q4kTokens2(
      KQuantWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    byte[] q = w.bytes();
    float[] s = w.scales();
    int cols = w.cols();
    int blocks = cols / SUPER;
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
      int k0 = o0 * blocks + b;
      int p0 = k0 * 144;
      int k1 = o1 * blocks + b;
      int p1 = k1 * 144;
      int k2 = o2 * blocks + b;
      int p2 = k2 * 144;
      int k3 = o3 * blocks + b;
      int p3 = k3 * 144;
      // Sub-block 2g in the low nibbles of run g, then 2g + 1 in its high ones: the row's order.
      // One loop for both, the nibble picked by a shift, so that C2 inlines it in full.
      for (int sub = 0; sub < 8; sub++) {
        int g = sub >> 1;
        int shift = 4 * (sub & 1);
        int i = b * SUPER + 32 * sub;
        float d0 = s[2 * k0] * q[p0 + sub];
        float m0 = s[2 * k0 + 1] * q[p0 + 8 + sub];
        float d1 = s[2 * k1] * q[p1 + sub];
        float m1 = s[2 * k1 + 1] * q[p1 + 8 + sub];
        float d2 = s[2 * k2] * q[p2 + sub];
        float m2 = s[2 * k2 + 1] * q[p2 + 8 + sub];
        float d3 = s[2 * k3] * q[p3 + sub];
        float m3 = s[2 * k3 + 1] * q[p3 + 8 + sub];
        for (int c = 0; c < 32; c += L) {
          FloatVector v0 =
              KQuantGemm.weights(
                  KQuantGemm.ints(q, p0 + 16 + 32 * g + c)
                      .lanewise(VectorOperators.ASHR, shift)
                      .and(0x0f),
                  d0,
                  m0);
          FloatVector v1 =
              KQuantGemm.weights(
                  KQuantGemm.ints(q, p1 + 16 + 32 * g + c)
                      .lanewise(VectorOperators.ASHR, shift)
                      .and(0x0f),
                  d1,
                  m1);
          FloatVector v2 =
              KQuantGemm.weights(
                  KQuantGemm.ints(q, p2 + 16 + 32 * g + c)
                      .lanewise(VectorOperators.ASHR, shift)
                      .and(0x0f),
                  d2,
                  m2);
          FloatVector v3 =
              KQuantGemm.weights(
                  KQuantGemm.ints(q, p3 + 16 + 32 * g + c)
                      .lanewise(VectorOperators.ASHR, shift)
                      .and(0x0f),
                  d3,
                  m3);
          FloatVector u0 = FloatVector.fromArray(S, x, x0 + i + c);
          a00 = v0.fma(u0, a00);
          a01 = v1.fma(u0, a01);
          a02 = v2.fma(u0, a02);
          a03 = v3.fma(u0, a03);
          FloatVector u1 = FloatVector.fromArray(S, x, x1 + i + c);
          a10 = v0.fma(u1, a10);
          a11 = v1.fma(u1, a11);
          a12 = v2.fma(u1, a12);
          a13 = v3.fma(u1, a13);
        }
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

  private static void q6kTokens4(
      KQuantWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    byte[] q = w.bytes();
    float[] s = w.scales();
    int cols = w.cols();
    int blocks = cols / SUPER;
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
      int k0 = o0 * blocks + b;
      int p0 = k0 * 272;
      int k1 = o1 * blocks + b;
      int p1 = k1 * 272;
      int k2 = o2 * blocks + b;
      int p2 = k2 * 272;
      int k3 = o3 * blocks + b;
      int p3 = k3 * 272;
      for (int g = 0; g < 16; g++) {
        int i = b * SUPER + 16 * g;
        float s0 = s[k0] * q[p0 + g];
        float s1 = s[k1] * q[p1 + g];
        float s2 = s[k2] * q[p2 + g];
        float s3 = s[k3] * q[p3 + g];
        for (int c = 0; c < 16; c += L) {
          FloatVector v0 = KQuantGemm.q6kChunk(q, p0 + 16 + 16 * g + c, s0);
          FloatVector v1 = KQuantGemm.q6kChunk(q, p1 + 16 + 16 * g + c, s1);
          FloatVector v2 = KQuantGemm.q6kChunk(q, p2 + 16 + 16 * g + c, s2);
          FloatVector v3 = KQuantGemm.q6kChunk(q, p3 + 16 + 16 * g + c, s3);
          FloatVector u0 = FloatVector.fromArray(S, x, x0 + i + c);
          a00 = v0.fma(u0, a00);
          a01 = v1.fma(u0, a01);
          a02 = v2.fma(u0, a02);
          a03 = v3.fma(u0, a03);
          FloatVector u1 = FloatVector.fromArray(S, x, x1 + i + c);
          a10 = v0.fma(u1, a10);
          a11 = v1.fma(u1, a11);
          a12 = v2.fma(u1, a12);
          a13 = v3.fma(u1, a13);
          FloatVector u2 = FloatVector.fromArray(S, x, x2 + i + c);
          a20 = v0.fma(u2, a20);
          a21 = v1.fma(u2, a21);
          a22 = v2.fma(u2, a22);
          a23 = v3.fma(u2, a23);
          FloatVector u3 = FloatVector.fromArray(S, x, x3 + i + c);
          a30 = v0.fma(u3, a30);
          a31 = v1.fma(u3, a31);
          a32 = v2.fma(u3, a32);
          a33 = v3.fma(u3, a33);
        }
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

  private static void q6kTokens2(
      KQuantWeights w,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    byte[] q = w.bytes();
    float[] s = w.scales();
    int cols = w.cols();
    int blocks = cols / SUPER;
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
      int k0 = o0 * blocks + b;
      int p0 = k0 * 272;
      int k1 = o1 * blocks + b;
      int p1 = k1 * 272;
      int k2 = o2 * blocks + b;
      int p2 = k2 * 272;
      int k3 = o3 * blocks + b;
      int p3 = k3 * 272;
      for (int g = 0; g < 16; g++) {
        int i = b * SUPER + 16 * g;
        float s0 = s[k0] * q[p0 + g];
        float s1 = s[k1] * q[p1 + g];
        float s2 = s[k2] * q[p2 + g];
        float s3 = s[k3] * q[p3 + g];
        for (int c = 0; c < 16; c += L) {
          FloatVector v0 = KQuantGemm.q6kChunk(q, p0 + 16 + 16 * g + c, s0);
          FloatVector v1 = KQuantGemm.q6kChunk(q, p1 + 16 + 16 * g + c, s1);
          FloatVector v2 = KQuantGemm.q6kChunk(q, p2 + 16 + 16 * g + c, s2);
          FloatVector v3 = KQuantGemm.q6kChunk(q, p3 + 16 + 16 * g + c, s3);
          FloatVector u0 = FloatVector.fromArray(S, x, x0 + i + c);
          a00 = v0.fma(u0, a00);
          a01 = v1.fma(u0, a01);
          a02 = v2.fma(u0, a02);
          a03 = v3.fma(u0, a03);
          FloatVector u1 = FloatVector.fromArray(S, x, x1 + i + c);
          a10 = v0.fma(u1, a10);
          a11 = v1.fma(u1, a11);
          a12 = v2.fma(u1, a12);
          a13 = v3.fma(u1, a13);
        }
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
