package io.flinfer.runtime.tensor;

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
   * bytes at {@code p}: the first four sub-blocks' in the low 6 bits of bytes 0..7, the last four's
   * in the nibbles of bytes 8..11 with their top 2 bits in bytes 0..7's top bits.
   */
  static int scaleMin(ByteBuffer b, int p, int j) {
    int sc;
    int m;
    if (j < 4) {
      sc = b.get(p + j) & 63;
      m = b.get(p + j + 4) & 63;
    } else {
      int q = b.get(p + j + 4) & 0xff;
      sc = (q & 0x0f) | (((b.get(p + j - 4) & 0xff) >>> 6) << 4);
      m = (q >>> 4) | (((b.get(p + j) & 0xff) >>> 6) << 4);
    }
    return sc | (m << 8);
  }
}
