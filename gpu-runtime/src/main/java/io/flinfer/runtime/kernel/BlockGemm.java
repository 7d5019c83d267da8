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
 * BlockWeights#decodeRow} gives it, and each output is reduced as {@link Gemm} reduces a decoded
 * row (one 8-lane accumulator, lanes summed in order). So a token gets the same bits here as in a
 * batch, where rows are decoded once and multiplied with all the batch's tokens by the float tiles
 * ({@link Gemm#rows4} where the CPU has the registers).
 */
public final class BlockGemm {
  static final int BLOCK = 32;
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int L = GemmKernels.LANES;
  private static final VectorSpecies<Byte> BYTES = ByteVector.SPECIES_64;
  private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;

  private BlockGemm() {}

  /**
   * Rows [oFrom, oTo) of {@code w} times the token {@code x}; {@code tmp} holds 32 floats.
   *
   * <p>Rows go side by side, each in its own accumulator (its order and bits unchanged), so that
   * independent chains of multiply-adds hide the latency one chain waits on, and each from its own
   * part of the range, read straight through as a sequential stream the hardware prefetcher follows
   * (as {@link HalfGemm#rows}): four Q8_0 rows from the four quarters, two Q4_0 rows from the
   * halves (whose nibbles take more instructions: four rows' would not stay in registers). A part
   * shorter than the first repeats its last row.
   */
  static void rows(BlockWeights w, float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    int last = oTo - 1;
    if (w.nibbles()) {
      int half = (oTo - oFrom + 1) / 2;
      for (int o = oFrom; o < oFrom + half; o++) {
        int o1 = Math.min(o + half, last);
        q4Rows2(w, x, 0, o, o1, tmp, 0);
        out[o] = GemmKernels.sum8(tmp, 0);
        out[o1] = GemmKernels.sum8(tmp, L);
      }
      return;
    }
    int quarter = (oTo - oFrom + 3) / 4;
    for (int o = oFrom; o < oFrom + quarter; o++) {
      int o1 = Math.min(o + quarter, last);
      int o2 = Math.min(o + 2 * quarter, last);
      int o3 = Math.min(o + 3 * quarter, last);
      q8Rows4(w, x, 0, o, o1, o2, o3, tmp);
      out[o] = GemmKernels.sum8(tmp, 0);
      out[o1] = GemmKernels.sum8(tmp, L);
      out[o2] = GemmKernels.sum8(tmp, 2 * L);
      out[o3] = GemmKernels.sum8(tmp, 3 * L);
    }
  }

  /**
   * Rows o0..o3 of {@code w} times the token at {@code x[xOff..]}: their accumulators' lanes into
   * {@code tmp[0..32)}, row after row, for {@link GemmKernels#sum8}.
   */
  static void rows4(
      BlockWeights w, float[] x, int xOff, int o0, int o1, int o2, int o3, float[] tmp) {
    if (w.nibbles()) {
      q4Rows2(w, x, xOff, o0, o1, tmp, 0);
      q4Rows2(w, x, xOff, o2, o3, tmp, 2 * L);
    } else {
      q8Rows4(w, x, xOff, o0, o1, o2, o3, tmp);
    }
  }

  /** Four Q8_0 rows' accumulators into {@code tmp[0..32)}. */
  private static void q8Rows4(
      BlockWeights w, float[] x, int xOff, int o0, int o1, int o2, int o3, float[] tmp) {
    byte[] q = w.quants();
    float[] d = w.scales();
    int cols = w.cols();
    int blocks = cols / BLOCK;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = a0;
    FloatVector a2 = a0;
    FloatVector a3 = a0;
    for (int b = 0; b < blocks; b++) {
      float s0 = d[o0 * blocks + b];
      float s1 = d[o1 * blocks + b];
      float s2 = d[o2 * blocks + b];
      float s3 = d[o3 * blocks + b];
      for (int j = 0; j < BLOCK; j += L) {
        int i = b * BLOCK + j;
        FloatVector xv = FloatVector.fromArray(S, x, xOff + i);
        a0 = int8(q, o0 * cols + i).mul(s0).fma(xv, a0);
        a1 = int8(q, o1 * cols + i).mul(s1).fma(xv, a1);
        a2 = int8(q, o2 * cols + i).mul(s2).fma(xv, a2);
        a3 = int8(q, o3 * cols + i).mul(s3).fma(xv, a3);
      }
    }
    a0.intoArray(tmp, 0);
    a1.intoArray(tmp, L);
    a2.intoArray(tmp, 2 * L);
    a3.intoArray(tmp, 3 * L);
  }

  /** Two Q4_0 rows' accumulators into {@code tmp[at..at + 16)}. */
  private static void q4Rows2(
      BlockWeights w, float[] x, int xOff, int o0, int o1, float[] tmp, int at) {
    byte[] q = w.quants();
    float[] d = w.scales();
    int blocks = w.cols() / BLOCK;
    int bb = BLOCK / 2;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = a0;
    for (int b = 0; b < blocks; b++) {
      int p0 = (o0 * blocks + b) * bb;
      int p1 = (o1 * blocks + b) * bb;
      int i = xOff + b * BLOCK;
      float s0 = d[o0 * blocks + b];
      float s1 = d[o1 * blocks + b];
      // Loops of two 8-value parts, low nibbles then high ones: written out, the vector calls
      // exceed what C2 inlines (node count) and the vectors would be boxed.
      for (int h = 0; h < bb; h += L) {
        FloatVector xv = FloatVector.fromArray(S, x, i + h);
        a0 = low(q, p0 + h).mul(s0).fma(xv, a0);
        a1 = low(q, p1 + h).mul(s1).fma(xv, a1);
      }
      for (int h = 0; h < bb; h += L) {
        FloatVector xv = FloatVector.fromArray(S, x, i + bb + h);
        a0 = high(q, p0 + h).mul(s0).fma(xv, a0);
        a1 = high(q, p1 + h).mul(s1).fma(xv, a1);
      }
    }
    a0.intoArray(tmp, at);
    a1.intoArray(tmp, at + L);
  }

  static FloatVector int8(byte[] q, int p) {
    return (FloatVector) ByteVector.fromArray(BYTES, q, p).convertShape(VectorOperators.B2F, S, 0);
  }

  /** The low nibbles of the eight bytes at {@code q[p]} as Q4_0 values (offset by 8), floats. */
  private static FloatVector low(byte[] q, int p) {
    return (FloatVector)
        ints(q, p).and(0x0f).sub(8).convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0);
  }

  /** The high nibbles of the eight bytes at {@code q[p]} as Q4_0 values, floats. */
  private static FloatVector high(byte[] q, int p) {
    return (FloatVector)
        ints(q, p)
            .lanewise(VectorOperators.ASHR, 4)
            .and(0x0f)
            .sub(8)
            .convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0);
  }

  private static IntVector ints(byte[] q, int p) {
    return (IntVector) ByteVector.fromArray(BYTES, q, p).convertShape(VectorOperators.B2I, INTS, 0);
  }

  /**
   * Values {@code j .. j + 8} of the block whose integers start at {@code q[p]}, as floats: int8
   * values, or 4-bit values offset by 8, value {@code j} in the low nibble of byte {@code j} and
   * value {@code j + 16} in its high nibble.
   */
  static FloatVector part(byte[] q, int p, int j, boolean nibbles) {
    if (!nibbles) {
      return int8(q, p + j);
    }
    // Nibbles are cut from int lanes, after the widening that the conversion needs anyway.
    IntVector v =
        (IntVector)
            ByteVector.fromArray(BYTES, q, p + (j & 15)).convertShape(VectorOperators.B2I, INTS, 0);
    IntVector n = j < 16 ? v.and(0x0f) : v.lanewise(VectorOperators.ASHR, 4).and(0x0f);
    return (FloatVector) n.sub(8).convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0);
  }
}
