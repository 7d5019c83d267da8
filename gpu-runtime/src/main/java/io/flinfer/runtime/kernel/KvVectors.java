package io.flinfer.runtime.kernel;

import io.flinfer.memcache.KvRows;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Eight consecutive KV values as floats, from a pool in any store type: fp32 as they are, bf16,
 * fp16 and FP8 (times the layer's scale) converted in vector registers. The conversions are exact
 * (every 16-bit value, subnormals, infinities and NaNs included, becomes the float {@link
 * io.flinfer.memcache.HalfFloats} gives), so a kernel reading 16-bit KV this way computes what the
 * scalar kernel computes.
 */
final class KvVectors {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;

  private KvVectors() {}

  private static final VectorSpecies<Byte> S8 = ByteVector.SPECIES_64;
  private static final VectorSpecies<Integer> S32 = IntVector.SPECIES_256;

  /** Values {@code element .. element + 7} of a layer's rows, as floats. */
  static FloatVector load(KvRows rows, int element) {
    switch (rows.type()) {
      case FP32:
        return FloatVector.fromArray(S, rows.floats(), element);
      case BF16:
        return HalfVectors.bf16(rows.halves(), element);
      case FP16:
        return HalfVectors.fp16(rows.halves(), element);
      case FP8_E4M3:
        return e4m3(codes(rows.bytes(), element)).mul(rows.scale());
      default:
        // An E5M2 code is the upper byte of an IEEE half (sign-extended, as fp16 takes halves).
        return HalfVectors.fp16(
                signedCodes(rows.bytes(), element).lanewise(VectorOperators.LSHL, 8))
            .mul(rows.scale());
    }
  }

  /**
   * Values {@code element .. element + count} of a layer's rows as floats in {@code dst[0..count)},
   * each as {@link #load} gives it; {@code count} a multiple of eight. The store type is looked at
   * once, so a kernel that stages a row here keeps the type's branches out of its own loop.
   */
  static void toFloats(KvRows rows, int element, float[] dst, int count) {
    switch (rows.type()) {
      case FP32:
        // Vector copies, not System.arraycopy: rows of eight are staged, where the copy's call
        // costs more than the copy.
        for (int i = 0; i < count; i += 8) {
          FloatVector.fromArray(S, rows.floats(), element + i).intoArray(dst, i);
        }
        break;
      case BF16:
        for (int i = 0; i < count; i += 8) {
          HalfVectors.bf16(rows.halves(), element + i).intoArray(dst, i);
        }
        break;
      case FP16:
        for (int i = 0; i < count; i += 8) {
          HalfVectors.fp16(rows.halves(), element + i).intoArray(dst, i);
        }
        break;
      default:
        for (int i = 0; i < count; i += 8) {
          load(rows, element + i).intoArray(dst, i);
        }
    }
  }

  /** Eight FP8 codes as unsigned ints. */
  private static IntVector codes(byte[] a, int element) {
    return signedCodes(a, element).and(0xFF);
  }

  /** Eight FP8 codes as signed ints. */
  private static IntVector signedCodes(byte[] a, int element) {
    return (IntVector)
        ByteVector.fromArray(S8, a, element).convertShape(VectorOperators.B2I, S32, 0);
  }

  /**
   * E4M3 to single: normals by rebiasing the exponent (7 to 127), subnormals ({@code m * 2^-9}) by
   * scaling, the NaN codes to NaN.
   */
  private static FloatVector e4m3(IntVector b) {
    IntVector sign = b.and(0x80).lanewise(VectorOperators.LSHL, 24);
    IntVector magnitude = b.and(0x7F);
    IntVector bits = magnitude.lanewise(VectorOperators.LSHL, 20).add(120 << 23);
    VectorMask<Integer> subnormal = magnitude.compare(VectorOperators.LT, 0x08);
    if (subnormal.anyTrue()) {
      IntVector small =
          ((FloatVector) magnitude.convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
              .mul(0x1.0p-9f)
              .reinterpretAsInts();
      bits = bits.blend(small, subnormal);
    }
    bits = bits.blend(0x7FC00000, magnitude.compare(VectorOperators.EQ, 0x7F));
    return bits.or(sign).reinterpretAsFloats();
  }
}
