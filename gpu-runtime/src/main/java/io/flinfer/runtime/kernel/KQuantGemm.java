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
 * Q4_K/Q5_K, {@code d * scale * (q - 32)} for Q6_K, the products of the scales first) and outputs
 * reduce in {@link PairedGemm}'s order, so a token gets the same bits here as in a batch, where
 * rows are decoded by {@link KQuantWeights#decodeRow} and multiplied by {@link PairedGemm}.
 * (Products with 8-bit activations, as ggml computes them, are {@link KQuantDots}'.)
 */
public final class KQuantGemm {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final VectorSpecies<Byte> BYTES = ByteVector.SPECIES_64;
  private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;

  private KQuantGemm() {}

  /** Eight bytes at {@code q[p]}, sign-extended to int lanes. */
  private static IntVector ints(byte[] q, int p) {
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

  /** Bit {@code bit} of the eight bytes at {@code q[p]}, moved to bit 4: Q5_K's fifth bits. */
  private static IntVector fifth(byte[] q, int p, int bit) {
    return ints(q, p).lanewise(VectorOperators.ASHR, bit).and(1).lanewise(VectorOperators.LSHL, 4);
  }

  /** {@code scale * n - min} in float lanes, rounded twice as the scalar decoders round it. */
  private static FloatVector weights(IntVector n, float scale, float min) {
    return ((FloatVector) n.convert(VectorOperators.I2F, 0)).mul(scale).sub(min);
  }

  /**
   * Q6_K: values {@code 8 * part ..} of quarter {@code k} of a half-block, whose low nibbles (high
   * ones for {@code k >= 2}) start at {@code q[ql + 32 * (k & 1)]} and bit pairs (pair {@code k})
   * at {@code q[qh]}: {@code scale * (q - 32)}.
   */
  static FloatVector q6kChunk(byte[] q, int ql, int qh, int k, int part, float scale) {
    IntVector a = ints(q, ql + 32 * (k & 1) + 8 * part);
    IntVector low = a.lanewise(VectorOperators.ASHR, (k >> 1) * 4).and(0x0f);
    IntVector h = ints(q, qh + 8 * part).lanewise(VectorOperators.ASHR, 2 * k).and(3);
    IntVector v = low.or(h.lanewise(VectorOperators.LSHL, 4)).sub(32);
    return ((FloatVector) v.convert(VectorOperators.I2F, 0)).mul(scale);
  }

  private static FloatVector xs(float[] x, int i) {
    return FloatVector.fromArray(S, x, i);
  }

  /*
   * The heap layouts. Q4_K/Q5_K super-block at p: 8 scales and 8 mins as bytes (in the file: fp16
   * d and dmin, and 12 bytes KScales unpacks), [Q5_K: 32 bytes of fifth bits,] then 4 runs of 32
   * bytes, run g holding
   * sub-block 2g in its low nibbles and 2g + 1 in its high ones; sub-block j's fifth bits are bit j
   * of the fifth-bit bytes. Q6_K super-block: two halves of 128 values, each 64 bytes of low
   * nibbles (ql), 32 bytes of bit pairs (qh) and 8 signed scales of 16 values; quarter k of a half
   * takes the low (k < 2) or high nibbles of ql[32 (k & 1)..] and bit pair k of qh.
   *
   * Loops go two 8-value chunks a turn: more written out cut C2's inlining short (node count) and
   * the vectors would be boxed.
   */

  /**
   * Super-block {@code q[p..]} of Q4_K ({@code fifthBits} false) or Q5_K as floats into dst[o..].
   */
  static void scaleMinBlock(
      byte[] q, int p, boolean fifthBits, float d, float dmin, float[] dst, int o) {
    int qs = fifthBits ? p + 48 : p + 16;
    for (int j = 0; j < 8; j++) {
      float scale = d * q[p + j];
      float min = dmin * q[p + 8 + j];
      int r = qs + 32 * (j >> 1);
      for (int part = 0; part < 4; part++) {
        IntVector n = (j & 1) == 0 ? low(q, r + 8 * part) : high(q, r + 8 * part);
        if (fifthBits) {
          n = n.or(fifth(q, p + 16 + 8 * part, j));
        }
        weights(n, scale, min).intoArray(dst, o + 32 * j + 8 * part);
      }
    }
  }

  /** Q6_K super-block {@code q[p..]} with scale {@code d} as floats into {@code dst[o..]}. */
  static void q6kBlock(byte[] q, int p, float d, float[] dst, int o) {
    for (int half = 0; half < 2; half++) {
      int ql = p + 64 * half;
      int qh = p + 128 + 32 * half;
      int sc = p + 192 + 8 * half;
      for (int k = 0; k < 4; k++) {
        for (int part = 0; part < 4; part++) {
          float scale = d * q[sc + 2 * k + (part >> 1)];
          q6kChunk(q, ql, qh, k, part, scale).intoArray(dst, o + 128 * half + 32 * k + 8 * part);
        }
      }
    }
  }

  /** Q4_K/Q5_K rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp}: 8 floats. */
  static void scaleMinRows(
      KQuantWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    byte[] q = w.bytes();
    float[] s = w.scales();
    int blocks = w.cols() / KQuantWeights.SUPER;
    boolean fifthBits = w.format() == KQuantWeights.Format.Q5_K;
    int bb = w.format().blockBytes;
    for (int o = oFrom; o < oTo; o++) {
      FloatVector even = FloatVector.zero(S);
      FloatVector odd = FloatVector.zero(S);
      for (int b = 0; b < blocks; b++) {
        int k = o * blocks + b;
        int p = k * bb;
        int h = p + 16;
        for (int g = 0; g < 4; g++) {
          float d1 = s[2 * k] * q[p + 2 * g];
          float m1 = s[2 * k + 1] * q[p + 8 + 2 * g];
          float d2 = s[2 * k] * q[p + 2 * g + 1];
          float m2 = s[2 * k + 1] * q[p + 8 + 2 * g + 1];
          int i = b * KQuantWeights.SUPER + 64 * g;
          // Chunks in the row's order: even ones to one accumulator, odd ones to the other.
          if (fifthBits) {
            int r = p + 48 + 32 * g;
            for (int c = 0; c < 32; c += 16) {
              even =
                  weights(low(q, r + c).or(fifth(q, h + c, 2 * g)), d1, m1).fma(xs(x, i + c), even);
              odd =
                  weights(low(q, r + c + 8).or(fifth(q, h + c + 8, 2 * g)), d1, m1)
                      .fma(xs(x, i + c + 8), odd);
            }
            for (int c = 0; c < 32; c += 16) {
              even =
                  weights(high(q, r + c).or(fifth(q, h + c, 2 * g + 1)), d2, m2)
                      .fma(xs(x, i + 32 + c), even);
              odd =
                  weights(high(q, r + c + 8).or(fifth(q, h + c + 8, 2 * g + 1)), d2, m2)
                      .fma(xs(x, i + 40 + c), odd);
            }
          } else {
            int r = p + 16 + 32 * g;
            for (int c = 0; c < 32; c += 16) {
              even = weights(low(q, r + c), d1, m1).fma(xs(x, i + c), even);
              odd = weights(low(q, r + c + 8), d1, m1).fma(xs(x, i + c + 8), odd);
            }
            for (int c = 0; c < 32; c += 16) {
              even = weights(high(q, r + c), d2, m2).fma(xs(x, i + 32 + c), even);
              odd = weights(high(q, r + c + 8), d2, m2).fma(xs(x, i + 40 + c), odd);
            }
          }
        }
      }
      even.add(odd).intoArray(tmp, 0);
      out[o] = GemmKernels.sum8(tmp, 0);
    }
  }

  /** Q6_K rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp}: 8 floats. */
  static void q6kRows(KQuantWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    byte[] q = w.bytes();
    float[] s = w.scales();
    int blocks = w.cols() / KQuantWeights.SUPER;
    for (int o = oFrom; o < oTo; o++) {
      FloatVector even = FloatVector.zero(S);
      FloatVector odd = FloatVector.zero(S);
      for (int b = 0; b < blocks; b++) {
        int k = o * blocks + b;
        int p = k * 210;
        float d = s[k];
        for (int half = 0; half < 2; half++) {
          int ql = p + 64 * half;
          int qh = p + 128 + 32 * half;
          int sc = p + 192 + 8 * half;
          for (int quarter = 0; quarter < 4; quarter++) {
            float s0 = d * q[sc + 2 * quarter];
            float s1 = d * q[sc + 2 * quarter + 1];
            // Chunks in the row's order: even ones to one accumulator, odd ones to the other.
            for (int j = 0; j < 2; j++) {
              float scale = j == 0 ? s0 : s1;
              int i = b * KQuantWeights.SUPER + 128 * half + 32 * quarter + 16 * j;
              even = q6kChunk(q, ql, qh, quarter, 2 * j, scale).fma(xs(x, i), even);
              odd = q6kChunk(q, ql, qh, quarter, 2 * j + 1, scale).fma(xs(x, i + 8), odd);
            }
          }
        }
      }
      even.add(odd).intoArray(tmp, 0);
      out[o] = GemmKernels.sum8(tmp, 0);
    }
  }
}
