package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.BlockWeights;
import java.nio.ByteBuffer;

/**
 * A matrix of 32-value blocks whose values are a small signed integer times the block's fp16 scale,
 * which take the Q8_0 heap form (a signed byte per value), so that the Q8_0 kernels multiply them:
 *
 * <ul>
 *   <li>IQ4_NL, 18 bytes a block: the scale, then 16 bytes of 4-bit indices into {@link
 *       io.flinfer.runtime.kernel.KQuantWeights#IQ4_VALUES} (the first 16 values in the low
 *       nibbles). Value = d * table[index]. The heap form is 1.9 times the file's size.
 *   <li>Q5_0, 22 bytes a block: the scale, 32 fifth bits (a little-endian int), 16 bytes of low
 *       nibbles. Value = d * (q - 16), q in 0..31. The heap form is 1.6 times the file's size.
 * </ul>
 */
final class Q8FormMatrix extends CompactMatrix {
  private final GgmlType type;

  Q8FormMatrix(GgmlType type, ByteBuffer data, int rows, int cols) {
    super(
        data,
        rows,
        cols,
        // The heap form: a byte per value and a float scale per block (the budget counts it).
        (long) rows * (cols / 32) * (32 + 4),
        type == GgmlType.Q5_0 ? BlockWeights::q5 : BlockWeights::iq4nl,
        type == GgmlType.Q5_0 ? Q8FormMatrix::decodeQ5 : Q8FormMatrix::decodeIq4nl);
    if (type != GgmlType.Q5_0 && type != GgmlType.IQ4_NL) {
      throw new IllegalArgumentException(type + " does not take the Q8_0 heap form");
    }
    this.type = type;
  }

  @Override
  public GgmlType type() {
    return type;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int blocks = cols / 32;
    int bb = (int) type.bytes(32);
    int base = row * blocks * bb;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * bb;
      float d = HalfFloats.fromHalf(data.getShort(p));
      for (int j = 0; j < 32; j++) {
        int q;
        if (type == GgmlType.Q5_0) {
          int packed = data.get(p + 6 + j % 16);
          int low = (j < 16 ? packed : packed >>> 4) & 0x0f;
          q = (low | ((data.getInt(p + 2) >>> j) & 1) << 4) - 16;
        } else {
          int packed = data.get(p + 2 + j % 16);
          q =
              io.flinfer.runtime.kernel.KQuantWeights.IQ4_VALUES[
                  (j < 16 ? packed : packed >>> 4) & 0x0f];
        }
        dst[off + b * 32 + j] = d * q;
      }
    }
  }

  private static void decodeQ5(ByteBuffer data, int cols, int row, float[] dst, int off) {
    BlockRows.decode(data, cols, row, dst, off, 22, false, BlockWeights::q5Values);
  }

  private static void decodeIq4nl(ByteBuffer data, int cols, int row, float[] dst, int off) {
    BlockRows.decode(data, cols, row, dst, off, 18, false, BlockWeights::iq4nlValues);
  }
}
