package io.flinfer.runtime.kernel;

import io.flinfer.memcache.KvRows;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Eight consecutive KV values as floats, from a pool in any store type: fp32 as they are, bf16 and
 * fp16 converted in vector registers. The conversions are exact (every 16-bit value, subnormals,
 * infinities and NaNs included, becomes the float {@link io.flinfer.memcache.HalfFloats} gives), so
 * a kernel reading 16-bit KV this way computes what the scalar kernel computes.
 */
final class KvVectors {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final VectorSpecies<Short> S16 = ShortVector.SPECIES_128;
  private static final VectorSpecies<Integer> S32 = IntVector.SPECIES_256;

  /** Half-precision exponent bias against single precision's, in the exponent field. */
  private static final int REBIAS = (127 - 15) << 23;

  private static final float TWO_POW_MINUS_24 = 0x1.0p-24f;

  private KvVectors() {}

  /** Values {@code element .. element + 7} of a layer's rows, as floats. */
  static FloatVector load(KvRows rows, int element) {
    switch (rows.type()) {
      case FP32:
        return FloatVector.fromArray(S, rows.floats(), element);
      case BF16:
        return halves(rows.halves(), element)
            .lanewise(VectorOperators.LSHL, 16)
            .reinterpretAsFloats();
      default:
        return fp16(halves(rows.halves(), element).and(0xFFFF));
    }
  }

  /** Eight 16-bit values, sign-extended to ints. */
  private static IntVector halves(short[] a, int element) {
    return (IntVector)
        ShortVector.fromArray(S16, a, element).convertShape(VectorOperators.S2I, S32, 0);
  }

  /** IEEE half to single: normals by rebiasing, subnormals by scaling, infinities and NaNs kept. */
  private static FloatVector fp16(IntVector h) {
    IntVector sign = h.and(0x8000).lanewise(VectorOperators.LSHL, 16);
    IntVector magnitude = h.and(0x7FFF);
    IntVector shifted = magnitude.lanewise(VectorOperators.LSHL, 13);
    IntVector bits = shifted.add(REBIAS);
    VectorMask<Integer> subnormal = magnitude.compare(VectorOperators.LT, 0x0400);
    IntVector small =
        ((FloatVector) magnitude.convert(VectorOperators.I2F, 0))
            .mul(TWO_POW_MINUS_24)
            .reinterpretAsInts();
    VectorMask<Integer> special = magnitude.compare(VectorOperators.GE, 0x7C00);
    bits = bits.blend(small, subnormal).blend(shifted.or(0x7F800000), special);
    return bits.or(sign).reinterpretAsFloats();
  }
}
