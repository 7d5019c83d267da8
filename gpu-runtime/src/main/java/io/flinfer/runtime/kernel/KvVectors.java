package io.flinfer.runtime.kernel;

import io.flinfer.memcache.KvRows;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Eight consecutive KV values as floats, from a pool in any store type: fp32 as they are, bf16 and
 * fp16 converted in vector registers. The conversions are exact (every 16-bit value, subnormals,
 * infinities and NaNs included, becomes the float {@link io.flinfer.memcache.HalfFloats} gives), so
 * a kernel reading 16-bit KV this way computes what the scalar kernel computes.
 */
final class KvVectors {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;

  private KvVectors() {}

  /** Values {@code element .. element + 7} of a layer's rows, as floats. */
  static FloatVector load(KvRows rows, int element) {
    switch (rows.type()) {
      case FP32:
        return FloatVector.fromArray(S, rows.floats(), element);
      case BF16:
        return HalfVectors.bf16(rows.halves(), element);
      default:
        return HalfVectors.fp16(rows.halves(), element);
    }
  }
}
