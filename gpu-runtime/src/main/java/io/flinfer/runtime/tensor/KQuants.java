package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.KScales;
import java.nio.ByteBuffer;

/**
 * The pieces the K-quant formats share: 256-value super-blocks whose 32-value sub-blocks have 6-bit
 * scales and mins packed into 12 bytes (Q4_K, Q5_K).
 */
final class KQuants {
  static final int SUPER = 256;

  private KQuants() {}

  /**
   * Sub-block {@code j}'s scale (low 6 bits of the result) and min (bits 8..13) from the 12 packed
   * bytes at {@code p} of the little-endian buffer {@code b} ({@link KScales#scaleMin}).
   */
  static int scaleMin(ByteBuffer b, int p, int j) {
    return KScales.scaleMin(b.getLong(p), b.getInt(p + 8), j);
  }
}
