package io.flinfer.runtime.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Products of one token with K-quant weights ({@link KQuantWeights}) computed from the packed
 * super-blocks: eight values at a time become float lanes in registers, are scaled and multiplied
 * with the activations, so a decode step streams the quantized bytes once and writes nothing.
 *
 * <p>Each weight is rounded as the row decoders round it ({@code d * scale * q - dmin * min} for
 * Q4_K/Q5_K as one multiply-add, {@code d * scale * (q - 32)} for Q6_K, the products of the scales
 * first) and each output is reduced as {@link Gemm} reduces a decoded row (one 8-lane accumulator,
 * lanes summed in order), so a token gets the same bits here as in a batch, where rows are decoded
 * by {@link KQuantWeights#decodeRow} and multiplied by the float tiles. (Products with 8-bit
 * activations, as ggml computes them, are {@link KQuantDots}'.)
 */
public final class KQuantGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;
  private static final VectorSpecies<Byte> BYTES = ByteVector.SPECIES_64;
  private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;

  /** Where in a product's scratch ({@link GemmKernels#SCRATCH} floats) a row pair's scales go. */
  private static final int SCALES = GemmKernels.SCRATCH - 4 * L;

  private KQuantGemm() {}

  /** Eight bytes at {@code q[p]}, sign-extended to int lanes. */
  static IntVector ints(byte[] q, int p) {
    return (IntVector) ByteVector.fromArray(BYTES, q, p).convertShape(VectorOperators.B2I, INTS, 0);
  }

  /** The low nibbles of the eight bytes at {@code q[p]}. */
  private static IntVector low(byte[] q, int p) {
    return ints(q, p).and(0x0f);
  }

  /** The high nibbles of the eight bytes at {@code q[p]}. */
  private static IntVector high(byte[] q, int p) {
    return ints(q, p).lanewise(VectorOperators.ASHR, 4).and(0x0f);
  }

  /** Bit {@code bit} of the fifth-bit bytes {@code h}, moved to bit 4. */
  private static IntVector fifthOf(IntVector h, int bit) {
    return h.lanewise(VectorOperators.ASHR, bit).and(1).lanewise(VectorOperators.LSHL, 4);
  }

  /**
   * {@code scale * n - min} in float lanes, one multiply-add (one rounding) as the scalar decoders
   * compute it: an instruction fewer than a product and a difference.
   */
  static FloatVector weights(IntVector n, float scale, float min) {
    return ((FloatVector) n.convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
        .fma(scale, -min);
  }

  /**
   * Q6_K heap form: the eight signed bytes at {@code q[p]} times {@code scale}: values {@code q -
   * 32} times their sub-block's scale, or a super-block's scales times its {@code d}.
   */
  static FloatVector q6kChunk(byte[] q, int p, float scale) {
    return ((FloatVector) ints(q, p).convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
        .mul(scale);
  }

  private static FloatVector xs(float[] x, int i) {
    return FloatVector.fromArray(S, x, i);
  }

  /*
   * The heap layouts. Q4_K/Q5_K super-block at p: 8 scales and 8 mins as bytes (in the file: fp16
   * d and dmin, and 12 bytes KScales unpacks), [Q5_K: 32 bytes of fifth bits,] then 4 runs of 32
   * bytes, run g holding
   * sub-block 2g in its low nibbles and 2g + 1 in its high ones; sub-block j's fifth bits are bit j
   * of the fifth-bit bytes. Q6_K super-block: 16 signed scales, one for each 16 values, then the
   * 256 values q - 32 as signed bytes.
   *
   * Loops go one 8-value chunk of each of two rows a turn: more written out cut C2's inlining
   * short (node count) and the vectors would be boxed.
   */

  /**
   * Super-block {@code q[p..]} of Q4_K ({@code fifthBits} false) or Q5_K as floats into dst[o..].
   */
  static void scaleMinBlock(
      byte[] q, int p, boolean fifthBits, float d, float dmin, float[] dst, int o) {
    int qs = fifthBits ? p + 48 : p + 16;
    // Sub-blocks 2g (low nibbles) and 2g + 1 (high nibbles) from one load of their 32 bytes.
    for (int g = 0; g < 4; g++) {
      float scaleLo = d * q[p + 2 * g];
      float minLo = dmin * q[p + 8 + 2 * g];
      float scaleHi = d * q[p + 2 * g + 1];
      float minHi = dmin * q[p + 9 + 2 * g];
      int r = qs + 32 * g;
      for (int part = 0; part < 4; part++) {
        IntVector n = ints(q, r + 8 * part);
        IntVector lo = n.and(0x0f);
        IntVector hi = n.lanewise(VectorOperators.ASHR, 4).and(0x0f);
        if (fifthBits) {
          IntVector h = ints(q, p + 16 + 8 * part);
          lo = lo.or(fifthOf(h, 2 * g));
          hi = hi.or(fifthOf(h, 2 * g + 1));
        }
        weights(lo, scaleLo, minLo).intoArray(dst, o + 64 * g + 8 * part);
        weights(hi, scaleHi, minHi).intoArray(dst, o + 64 * g + 32 + 8 * part);
      }
    }
  }

  /** Q6_K super-block {@code q[p..]} with scale {@code d} as floats into {@code dst[o..]}. */
  static void q6kBlock(byte[] q, int p, float d, float[] dst, int o) {
    for (int g = 0; g < 16; g++) {
      float scale = d * q[p + g];
      q6kChunk(q, p + 16 + 16 * g, scale).intoArray(dst, o + 16 * g);
      q6kChunk(q, p + 24 + 16 * g, scale).intoArray(dst, o + 16 * g + L);
    }
  }

  /**
   * Q4_K/Q5_K rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp}: 16 floats. Two
   * rows go side by side, one from each half of the range, each in its own accumulator (two chains
   * of multiply-adds, two sequential streams); a shorter second half repeats its last row.
   */
  static void scaleMinRows(
      KQuantWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    int half = (oTo - oFrom + 1) / 2;
    boolean fifthBits = w.format() == KQuantWeights.Format.Q5_K;
    for (int o = oFrom; o < oFrom + half; o++) {
      int o1 = Math.min(o + half, oTo - 1);
      // One method per format: each loop holds fewer vector calls, which C2 inlines in full
      // (past its node count it stops inlining, and the vectors would be boxed).
      if (fifthBits) {
        q5kRows2(w, x, o, o1, tmp);
      } else {
        q4kRows2(w, x, 0, o, o1, tmp, 0);
      }
      out[o] = GemmKernels.sum8(tmp, 0);
      out[o1] = GemmKernels.sum8(tmp, L);
    }
  }

  /**
   * Rows o0..o3 of Q4_K or Q6_K weights {@code w} times the token at {@code x[xOff..]}: their
   * accumulators' lanes into {@code tmp[0..32)}, row after row, for {@link GemmKernels#sum8};
   * {@code tmp} holds {@link GemmKernels#SCRATCH} floats.
   */
  static void rows4(
      KQuantWeights w, float[] x, int xOff, int o0, int o1, int o2, int o3, float[] tmp) {
    if (w.format() == KQuantWeights.Format.Q6_K) {
      q6kRows2(w, x, xOff, o0, o1, tmp, 0);
      q6kRows2(w, x, xOff, o2, o3, tmp, 2 * L);
    } else {
      q4kRows2(w, x, xOff, o0, o1, tmp, 0);
      q4kRows2(w, x, xOff, o2, o3, tmp, 2 * L);
    }
  }

  /** Two Q4_K rows' accumulators into {@code tmp[at..at + 16)}. */
  private static void q4kRows2(
      KQuantWeights w, float[] x, int xOff, int o0, int o1, float[] tmp, int at) {
    byte[] q = w.bytes();
    float[] s = w.scales();
    int blocks = w.cols() / KQuantWeights.SUPER;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = a0;
    for (int b = 0; b < blocks; b++) {
      int k0 = o0 * blocks + b;
      int k1 = o1 * blocks + b;
      int p0 = k0 * 144;
      int p1 = k1 * 144;
      for (int g = 0; g < 4; g++) {
        int i = xOff + b * KQuantWeights.SUPER + 64 * g;
        int r0 = p0 + 16 + 32 * g;
        int r1 = p1 + 16 + 32 * g;
        // Sub-block 2g in the low nibbles, then 2g + 1 in the high ones: the row's order.
        float d0 = s[2 * k0] * q[p0 + 2 * g];
        float m0 = s[2 * k0 + 1] * q[p0 + 8 + 2 * g];
        float d1 = s[2 * k1] * q[p1 + 2 * g];
        float m1 = s[2 * k1 + 1] * q[p1 + 8 + 2 * g];
        for (int c = 0; c < 32; c += L) {
          FloatVector xv = xs(x, i + c);
          a0 = weights(low(q, r0 + c), d0, m0).fma(xv, a0);
          a1 = weights(low(q, r1 + c), d1, m1).fma(xv, a1);
        }
        d0 = s[2 * k0] * q[p0 + 2 * g + 1];
        m0 = s[2 * k0 + 1] * q[p0 + 8 + 2 * g + 1];
        d1 = s[2 * k1] * q[p1 + 2 * g + 1];
        m1 = s[2 * k1 + 1] * q[p1 + 8 + 2 * g + 1];
        for (int c = 0; c < 32; c += L) {
          FloatVector xv = xs(x, i + 32 + c);
          a0 = weights(high(q, r0 + c), d0, m0).fma(xv, a0);
          a1 = weights(high(q, r1 + c), d1, m1).fma(xv, a1);
        }
      }
    }
    a0.intoArray(tmp, at);
    a1.intoArray(tmp, at + L);
  }

  /** Two Q5_K rows' accumulators into {@code tmp[0..16)}. */
  private static void q5kRows2(KQuantWeights w, float[] x, int o0, int o1, float[] tmp) {
    byte[] q = w.bytes();
    float[] s = w.scales();
    int blocks = w.cols() / KQuantWeights.SUPER;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = a0;
    for (int b = 0; b < blocks; b++) {
      int k0 = o0 * blocks + b;
      int k1 = o1 * blocks + b;
      int p0 = k0 * 176;
      int p1 = k1 * 176;
      for (int g = 0; g < 4; g++) {
        int i = b * KQuantWeights.SUPER + 64 * g;
        int r0 = p0 + 48 + 32 * g;
        int r1 = p1 + 48 + 32 * g;
        float d0 = s[2 * k0] * q[p0 + 2 * g];
        float m0 = s[2 * k0 + 1] * q[p0 + 8 + 2 * g];
        float d1 = s[2 * k1] * q[p1 + 2 * g];
        float m1 = s[2 * k1 + 1] * q[p1 + 8 + 2 * g];
        // Vector calls only, no helpers: with the fifth bits, helper calls took C2 past its
        // inlining budget and the vectors were boxed (110M Q5_K_M batch 1: 17-29 tokens/s, 40-94
        // written out; one loop over both halves measured 43-66).
        int lowBit = 2 * g;
        for (int c = 0; c < 32; c += L) {
          FloatVector xv = FloatVector.fromArray(S, x, i + c);
          IntVector n0 =
              (IntVector)
                  ByteVector.fromArray(BYTES, q, r0 + c).convertShape(VectorOperators.B2I, INTS, 0);
          IntVector h0 =
              (IntVector)
                  ByteVector.fromArray(BYTES, q, p0 + 16 + c)
                      .convertShape(VectorOperators.B2I, INTS, 0);
          IntVector n1 =
              (IntVector)
                  ByteVector.fromArray(BYTES, q, r1 + c).convertShape(VectorOperators.B2I, INTS, 0);
          IntVector h1 =
              (IntVector)
                  ByteVector.fromArray(BYTES, q, p1 + 16 + c)
                      .convertShape(VectorOperators.B2I, INTS, 0);
          IntVector v0 =
              n0.and(0x0f)
                  .or(
                      h0.lanewise(VectorOperators.ASHR, lowBit)
                          .and(1)
                          .lanewise(VectorOperators.LSHL, 4));
          IntVector v1 =
              n1.and(0x0f)
                  .or(
                      h1.lanewise(VectorOperators.ASHR, lowBit)
                          .and(1)
                          .lanewise(VectorOperators.LSHL, 4));
          a0 =
              ((FloatVector) v0.convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
                  .fma(d0, -m0)
                  .fma(xv, a0);
          a1 =
              ((FloatVector) v1.convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
                  .fma(d1, -m1)
                  .fma(xv, a1);
        }
        d0 = s[2 * k0] * q[p0 + 2 * g + 1];
        m0 = s[2 * k0 + 1] * q[p0 + 8 + 2 * g + 1];
        d1 = s[2 * k1] * q[p1 + 2 * g + 1];
        m1 = s[2 * k1 + 1] * q[p1 + 8 + 2 * g + 1];
        int highBit = 2 * g + 1;
        for (int c = 0; c < 32; c += L) {
          FloatVector xv = FloatVector.fromArray(S, x, i + 32 + c);
          IntVector n0 =
              (IntVector)
                  ByteVector.fromArray(BYTES, q, r0 + c).convertShape(VectorOperators.B2I, INTS, 0);
          IntVector h0 =
              (IntVector)
                  ByteVector.fromArray(BYTES, q, p0 + 16 + c)
                      .convertShape(VectorOperators.B2I, INTS, 0);
          IntVector n1 =
              (IntVector)
                  ByteVector.fromArray(BYTES, q, r1 + c).convertShape(VectorOperators.B2I, INTS, 0);
          IntVector h1 =
              (IntVector)
                  ByteVector.fromArray(BYTES, q, p1 + 16 + c)
                      .convertShape(VectorOperators.B2I, INTS, 0);
          IntVector v0 =
              n0.lanewise(VectorOperators.ASHR, 4)
                  .and(0x0f)
                  .or(
                      h0.lanewise(VectorOperators.ASHR, highBit)
                          .and(1)
                          .lanewise(VectorOperators.LSHL, 4));
          IntVector v1 =
              n1.lanewise(VectorOperators.ASHR, 4)
                  .and(0x0f)
                  .or(
                      h1.lanewise(VectorOperators.ASHR, highBit)
                          .and(1)
                          .lanewise(VectorOperators.LSHL, 4));
          a0 =
              ((FloatVector) v0.convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
                  .fma(d0, -m0)
                  .fma(xv, a0);
          a1 =
              ((FloatVector) v1.convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
                  .fma(d1, -m1)
                  .fma(xv, a1);
        }
      }
    }
    // Stored through a sum with -0 (x + -0 is x, bit for bit): in about one run in four, C2
    // compiled the plain stores of the loop's accumulators without their intrinsic, and the
    // vectors were boxed (110M Q5_K_M batch 1 at 35-50 tokens/s instead of 75-94; ten runs after
    // this, 82-96).
    FloatVector.broadcast(S, -0f).add(a0).intoArray(tmp, 0);
    FloatVector.broadcast(S, -0f).add(a1).intoArray(tmp, L);
  }

  /**
   * Q2_K: the eight values at {@code q[p]} (heap form, 0..3) as {@code (d * scale) * q - dmin *
   * min}, a product and a difference, each rounded, as llama.cpp's reference dequantizes them.
   */
  static FloatVector q2kChunk(byte[] q, int p, float scale, float min) {
    return ((FloatVector) ints(q, p).convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
        .mul(scale)
        .sub(min);
  }

  /**
   * Q2_K super-block {@code q[p..]} with scales {@code d, dmin} as floats into {@code dst[o..]}.
   */
  static void q2kBlock(byte[] q, int p, float d, float dmin, float[] dst, int o) {
    for (int g = 0; g < 16; g++) {
      float scale = d * q[p + g];
      float min = dmin * q[p + 16 + g];
      q2kChunk(q, p + 32 + 16 * g, scale, min).intoArray(dst, o + 16 * g);
      q2kChunk(q, p + 40 + 16 * g, scale, min).intoArray(dst, o + 16 * g + L);
    }
  }

  /**
   * Q2_K rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp}: 16 floats. Two rows
   * side by side, as {@link #scaleMinRows}.
   */
  static void q2kRows(KQuantWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    int half = (oTo - oFrom + 1) / 2;
    for (int o = oFrom; o < oFrom + half; o++) {
      int o1 = Math.min(o + half, oTo - 1);
      q2kRows2(w, x, o, o1, tmp);
      out[o] = GemmKernels.sum8(tmp, 0);
      out[o1] = GemmKernels.sum8(tmp, L);
    }
  }

  /** Two Q2_K rows' accumulators into {@code tmp[0..16)}. */
  private static void q2kRows2(KQuantWeights w, float[] x, int o0, int o1, float[] tmp) {
    byte[] q = w.bytes();
    float[] s = w.scales();
    int blocks = w.cols() / KQuantWeights.SUPER;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = a0;
    for (int b = 0; b < blocks; b++) {
      int k0 = o0 * blocks + b;
      int k1 = o1 * blocks + b;
      int p0 = k0 * 288;
      int p1 = k1 * 288;
      for (int g = 0; g < 16; g++) {
        int i = b * KQuantWeights.SUPER + 16 * g;
        float s0 = s[2 * k0] * q[p0 + g];
        float m0 = s[2 * k0 + 1] * q[p0 + 16 + g];
        float s1 = s[2 * k1] * q[p1 + g];
        float m1 = s[2 * k1 + 1] * q[p1 + 16 + g];
        for (int c = 0; c < 16; c += L) {
          FloatVector xv = xs(x, i + c);
          a0 = q2kChunk(q, p0 + 32 + 16 * g + c, s0, m0).fma(xv, a0);
          a1 = q2kChunk(q, p1 + 32 + 16 * g + c, s1, m1).fma(xv, a1);
        }
      }
    }
    a0.intoArray(tmp, 0);
    a1.intoArray(tmp, L);
  }

  /**
   * Q6_K rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp}: {@link
   * GemmKernels#SCRATCH} floats. Two rows side by side, as {@link #scaleMinRows}.
   */
  static void q6kRows(KQuantWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    int half = (oTo - oFrom + 1) / 2;
    for (int o = oFrom; o < oFrom + half; o++) {
      int o1 = Math.min(o + half, oTo - 1);
      q6kRows2(w, x, 0, o, o1, tmp, 0);
      out[o] = GemmKernels.sum8(tmp, 0);
      out[o1] = GemmKernels.sum8(tmp, L);
    }
  }

  /** Two Q6_K rows' accumulators into {@code tmp[at..at + 16)}. */
  private static void q6kRows2(
      KQuantWeights w, float[] x, int xOff, int o0, int o1, float[] tmp, int at) {
    byte[] q = w.bytes();
    float[] s = w.scales();
    int blocks = w.cols() / KQuantWeights.SUPER;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = a0;
    for (int b = 0; b < blocks; b++) {
      int k0 = o0 * blocks + b;
      int k1 = o1 * blocks + b;
      int p0 = k0 * 272;
      int p1 = k1 * 272;
      // The 16 scales of each row as floats, d * scale (the products the scalar decoder forms),
      // eight a vector, rather than a scalar conversion and product for every 16 values (one core,
      // 2048 x 768: 17 -> 19 GFLOP/s).
      q6kChunk(q, p0, s[k0]).intoArray(tmp, SCALES);
      q6kChunk(q, p0 + L, s[k0]).intoArray(tmp, SCALES + L);
      q6kChunk(q, p1, s[k1]).intoArray(tmp, SCALES + 2 * L);
      q6kChunk(q, p1 + L, s[k1]).intoArray(tmp, SCALES + 3 * L);
      for (int g = 0; g < 16; g++) {
        int i = xOff + b * KQuantWeights.SUPER + 16 * g;
        float s0 = tmp[SCALES + g];
        float s1 = tmp[SCALES + 2 * L + g];
        for (int c = 0; c < 16; c += L) {
          FloatVector xv = xs(x, i + c);
          a0 = q6kChunk(q, p0 + 16 + 16 * g + c, s0).fma(xv, a0);
          a1 = q6kChunk(q, p1 + 16 + 16 * g + c, s1).fma(xv, a1);
        }
      }
    }
    a0.intoArray(tmp, at);
    a1.intoArray(tmp, at + L);
  }
}
