package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.BlockWeights;
import io.flinfer.runtime.kernel.KQuantWeights;
import java.nio.ByteBuffer;

/**
 * An IQ4_NL weight matrix: blocks of 32 values (18 bytes): the fp16 scale d, then 16 bytes of 4-bit
 * indices into a table of 16 values ({@link KQuantWeights#IQ4_VALUES}), the block's first 16 values
 * in the low nibbles. Value = d * table[index]. On the heap it takes the Q8_0 form (each value's
 * table entry as a signed byte), so the Q8_0 kernels multiply it.
 */
final class Iq4NlMatrix extends CompactMatrix {
  Iq4NlMatrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols, BlockWeights::iq4nl, Iq4NlMatrix::decodeMapped);
  }

  @Override
  public GgmlType type() {
    return GgmlType.IQ4_NL;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    decodeMapped(data, cols, row, dst, off);
  }

  /** Row {@code row} of the mapped blocks, value by value (the heap form's bits). */
  static void decodeMapped(ByteBuffer data, int cols, int row, float[] dst, int off) {
    int blocks = cols / 32;
    int base = row * blocks * 18;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * 18;
      float d = HalfFloats.fromHalf(data.getShort(p));
      for (int j = 0; j < 32; j++) {
        int packed = data.get(p + 2 + j % 16);
        int index = (j < 16 ? packed : packed >>> 4) & 0x0f;
        dst[off + b * 32 + j] = d * KQuantWeights.IQ4_VALUES[index];
      }
    }
  }
}
