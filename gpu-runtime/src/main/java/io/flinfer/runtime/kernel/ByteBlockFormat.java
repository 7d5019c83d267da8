package io.flinfer.runtime.kernel;

import java.nio.ByteBuffer;

/**
 * File formats of 32-value blocks that open with an fp16 scale d (and, with offsets, an fp16 m),
 * whose values this runtime holds as a signed byte each: the Q8_0 heap form ({@link BlockWeights})
 * for those without offsets, value = d * q, and {@link AffineBlockWeights} for those with, value =
 * d * q + m. What differs between them is data: where the 4-bit parts and the fifth bits lie, the
 * offset subtracted, or the table the 4-bit part indexes.
 */
public enum ByteBlockFormat {
  /** 22 bytes: d, 32 fifth bits (a little-endian int), 16 bytes of low nibbles; q - 16. */
  Q5_0(22, false, 6, 2, 16, null),
  /** 18 bytes: d, 16 bytes of 4-bit indices into {@link KQuantWeights#IQ4_VALUES}. */
  IQ4_NL(18, false, 2, -1, 0, KQuantWeights.IQ4_VALUES),
  /** 20 bytes: d, m, 16 bytes of nibbles. */
  Q4_1(20, true, 4, -1, 0, null),
  /** 24 bytes: d, m, 32 fifth bits, 16 bytes of low nibbles. */
  Q5_1(24, true, 8, 4, 0, null);

  /** Bytes of a block in the file. */
  public final int blockBytes;

  /** Whether a block has an offset m after its scale. */
  public final boolean offsets;

  private final int nibblesAt;
  private final int fifthBitsAt;
  private final int bias;
  private final byte[] table;

  ByteBlockFormat(
      int blockBytes, boolean offsets, int nibblesAt, int fifthBitsAt, int bias, byte[] table) {
    this.blockBytes = blockBytes;
    this.offsets = offsets;
    this.nibblesAt = nibblesAt;
    this.fifthBitsAt = fifthBitsAt;
    this.bias = bias;
    this.table = table;
  }

  /**
   * Value {@code j} (0..31) of the block at {@code b[p..]} as an integer: its nibble (the low one
   * of byte {@code j % 16} for the first 16, the high one after), with its fifth bit (bit j) above
   * it, less the bias, or the table's entry for it.
   */
  public int value(ByteBuffer b, int p, int j) {
    int packed = b.get(p + nibblesAt + j % 16);
    int q = (j < 16 ? packed : packed >>> 4) & 0x0f;
    if (table != null) {
      return table[q];
    }
    if (fifthBitsAt >= 0) {
      q |= ((b.getInt(p + fifthBitsAt) >>> j) & 1) << 4;
    }
    return q - bias;
  }

  /** The 32 values of the block at {@code b[p..]} as bytes into {@code dst[o..]}. */
  void values(ByteBuffer b, int p, byte[] dst, int o) {
    for (int j = 0; j < BlockGemm.BLOCK; j++) {
      dst[o + j] = (byte) value(b, p, j);
    }
  }
}
