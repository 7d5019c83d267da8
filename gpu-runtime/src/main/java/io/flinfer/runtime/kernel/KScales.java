package io.flinfer.runtime.kernel;

/**
 * The 6-bit scales and mins of Q4_K and Q5_K super-blocks, packed into 12 bytes: the first four
 * sub-blocks' in the low 6 bits of bytes 0..7, the last four's in the nibbles of bytes 8..11 with
 * their top 2 bits in bytes 0..7's top bits. One unpacking for the mapped and the heap forms. Also
 * Q3_K's sixteen 6-bit scales in 12 bytes.
 */
public final class KScales {
  private KScales() {}

  /**
   * Sub-block {@code j}'s scale (low 6 bits of the result) and min (bits 8..13), from the packed
   * bytes 0..7 as a little-endian long and bytes 8..11 as a little-endian int.
   */
  public static int scaleMin(long low8, int high4, int j) {
    int sc;
    int m;
    if (j < 4) {
      sc = (int) (low8 >>> (8 * j)) & 63;
      m = (int) (low8 >>> (8 * (j + 4))) & 63;
    } else {
      int q = (high4 >>> (8 * (j - 4))) & 0xff;
      sc = (q & 0x0f) | ((int) (low8 >>> (8 * (j - 4) + 6)) & 3) << 4;
      m = (q >>> 4) | ((int) (low8 >>> (8 * j + 6)) & 3) << 4;
    }
    return sc | (m << 8);
  }

  /**
   * Sub-block {@code j}'s 6-bit scale (0..63) of a Q3_K super-block whose 12 scale bytes start at
   * {@code at}: the low nibbles of bytes 0..7 for scales 0..7, their high nibbles for 8..15, and
   * the top two bits at bits {@code 2 (j / 4)} of byte {@code 8 + j % 4}.
   */
  public static int q3kScale(java.nio.ByteBuffer b, int at, int j) {
    int low = (b.get(at + (j & 7)) >>> (j < 8 ? 0 : 4)) & 0x0f;
    int high = (b.get(at + 8 + (j & 3)) >>> (2 * (j >>> 2))) & 3;
    return low | (high << 4);
  }
}
