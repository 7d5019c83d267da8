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

  /** Rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp} holds 8 floats. */
  static void rows(BlockWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
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
