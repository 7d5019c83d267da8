package io.flinfer.runtime.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Products of one token with weights quantized in blocks of 32 values sharing one scale (Q8_0,
 * Q4_0), computed from the quantized values: each block's integers become float lanes in registers,
 * are scaled and multiplied with the activations. No row is expanded to floats in memory, so a
 * decode step streams the quantized bytes once and nothing else.
 *
 * <p>Each weight is {@code scale * value} rounded to a float, exactly as {@link
 * BlockWeights#decodeRow} gives it, and the output is reduced in {@link PairedGemm}'s order (even
 * and odd 8-value chunks in two accumulators). So a token gets the same bits here as in a batch,
 * where rows are decoded once and multiplied with all the batch's tokens by {@link PairedGemm}.
 */
public final class BlockGemm {
  static final int BLOCK = 32;
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final VectorSpecies<Byte> BYTES = ByteVector.SPECIES_64;
  private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;

  private BlockGemm() {}

  /**
   * Rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp} holds 16 floats. Q8_0
   * rows go two side by side, one from each half of the range (two sequential streams for the
   * prefetcher), each in its own two accumulators: the same order and bits, twice the independent
   * chains (32000 x 768 on one core: 12.1 against 15.1 GB/s). A shorter second half repeats its
   * last row.
   */
  static void rows(BlockWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    if (w.nibbles()) {
      singles(w, x, out, oFrom, oTo, tmp);
      return;
    }
    int half = (oTo - oFrom + 1) / 2;
    for (int o = oFrom; o < oFrom + half; o++) {
      q8Pair(w, x, out, o, Math.min(o + half, oTo - 1), tmp);
    }
  }

  /** Two Q8_0 rows; without Q4_0's branch, so that C2 keeps the vectors in registers. */
  private static void q8Pair(BlockWeights w, float[] x, float[] out, int o0, int o1, float[] tmp) {
    byte[] q = w.quants();
    float[] d = w.scales();
    int blocks = w.cols() / BLOCK;
    int bb = w.blockBytes();
    int r0 = o0 * blocks * bb;
    int r1 = o1 * blocks * bb;
    FloatVector even0 = FloatVector.zero(S);
    FloatVector odd0 = even0;
    FloatVector even1 = even0;
    FloatVector odd1 = even0;
    for (int b = 0; b < blocks; b++) {
      int p0 = r0 + b * bb;
      int p1 = r1 + b * bb;
      int i = b * BLOCK;
      float s0 = d[o0 * blocks + b];
      float s1 = d[o1 * blocks + b];
      FloatVector x0 = FloatVector.fromArray(S, x, i);
      FloatVector x1 = FloatVector.fromArray(S, x, i + 8);
      FloatVector x2 = FloatVector.fromArray(S, x, i + 16);
      FloatVector x3 = FloatVector.fromArray(S, x, i + 24);
      even0 = int8(q, p0).mul(s0).fma(x0, even0);
      even1 = int8(q, p1).mul(s1).fma(x0, even1);
      odd0 = int8(q, p0 + 8).mul(s0).fma(x1, odd0);
      odd1 = int8(q, p1 + 8).mul(s1).fma(x1, odd1);
      even0 = int8(q, p0 + 16).mul(s0).fma(x2, even0);
      even1 = int8(q, p1 + 16).mul(s1).fma(x2, even1);
      odd0 = int8(q, p0 + 24).mul(s0).fma(x3, odd0);
      odd1 = int8(q, p1 + 24).mul(s1).fma(x3, odd1);
    }
    even0.add(odd0).intoArray(tmp, 0);
    even1.add(odd1).intoArray(tmp, 8);
    out[o0] = GemmKernels.sum8(tmp, 0);
    out[o1] = GemmKernels.sum8(tmp, 8);
  }

  private static FloatVector int8(byte[] q, int p) {
    return (FloatVector) ByteVector.fromArray(BYTES, q, p).convertShape(VectorOperators.B2F, S, 0);
  }

  /** One row at a time (Q4_0). */
  private static void singles(
      BlockWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    byte[] q = w.quants();
    float[] d = w.scales();
    int cols = w.cols();
    int blocks = cols / BLOCK;
    int bb = w.blockBytes();
    boolean nibbles = w.nibbles();
    for (int o = oFrom; o < oTo; o++) {
      int r0 = o * blocks * bb;
      FloatVector even = FloatVector.zero(S);
      FloatVector odd = FloatVector.zero(S);
      for (int b = 0; b < blocks; b++) {
        int p = r0 + b * bb;
        int i = b * BLOCK;
        float scale = d[o * blocks + b];
        // The four parts written out: C2 does not unroll a loop over them, which halves the speed.
        even = part(q, p, 0, nibbles).mul(scale).fma(FloatVector.fromArray(S, x, i), even);
        odd = part(q, p, 8, nibbles).mul(scale).fma(FloatVector.fromArray(S, x, i + 8), odd);
        even = part(q, p, 16, nibbles).mul(scale).fma(FloatVector.fromArray(S, x, i + 16), even);
        odd = part(q, p, 24, nibbles).mul(scale).fma(FloatVector.fromArray(S, x, i + 24), odd);
      }
      even.add(odd).intoArray(tmp, 0);
      out[o] = GemmKernels.sum8(tmp, 0);
    }
  }

  /**
   * Values {@code j .. j + 8} of the block whose integers start at {@code q[p]}, as floats: int8
   * values, or 4-bit values offset by 8, value {@code j} in the low nibble of byte {@code j} and
   * value {@code j + 16} in its high nibble.
   */
  static FloatVector part(byte[] q, int p, int j, boolean nibbles) {
    if (!nibbles) {
      return (FloatVector)
          ByteVector.fromArray(BYTES, q, p + j).convertShape(VectorOperators.B2F, S, 0);
    }
    // Nibbles are cut from int lanes, after the widening that the conversion needs anyway.
    IntVector v =
        (IntVector)
            ByteVector.fromArray(BYTES, q, p + (j & 15)).convertShape(VectorOperators.B2I, INTS, 0);
    IntVector n = j < 16 ? v.and(0x0f) : v.lanewise(VectorOperators.ASHR, 4).and(0x0f);
    return (FloatVector) n.sub(8).convert(VectorOperators.I2F, 0);
  }
}
