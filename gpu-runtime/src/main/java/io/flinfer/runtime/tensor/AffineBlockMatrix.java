package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.AffineBlockWeights;
import java.nio.ByteBuffer;

/**
 * A matrix of 32-value blocks with an fp16 scale d and offset m each: Q4_1 (20 bytes a block: d, m,
 * 16 bytes of nibbles) and Q5_1 (24 bytes: d, m, 32 fifth bits, 16 bytes of nibbles). Value = d * q
 * + m ({@link AffineBlockWeights}).
 */
final class AffineBlockMatrix extends CompactMatrix {
  private final GgmlType type;

  AffineBlockMatrix(GgmlType type, ByteBuffer data, int rows, int cols) {
    super(
        data,
        rows,
        cols,
        // The heap form: a byte per value, a float scale and offset per block (the budget counts
        // it).
        (long) rows * (cols / 32) * (32 + 8),
        type == GgmlType.Q5_1 ? AffineBlockWeights::q51 : AffineBlockWeights::q41,
        type == GgmlType.Q5_1 ? AffineBlockMatrix::decodeQ51 : AffineBlockMatrix::decodeQ41);
    if (type != GgmlType.Q4_1 && type != GgmlType.Q5_1) {
      throw new IllegalArgumentException(type + " is not a block type with offsets");
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
      float m = HalfFloats.fromHalf(data.getShort(p + 2));
      int nibbles = type == GgmlType.Q5_1 ? p + 8 : p + 4;
      for (int j = 0; j < 32; j++) {
        int packed = data.get(nibbles + j % 16);
        int q = (j < 16 ? packed : packed >>> 4) & 0x0f;
        if (type == GgmlType.Q5_1) {
          q |= ((data.getInt(p + 4) >>> j) & 1) << 4;
        }
        dst[off + b * 32 + j] = d * q + m;
      }
    }
  }

  private static void decodeQ41(ByteBuffer data, int cols, int row, float[] dst, int off) {
    BlockRows.decode(data, cols, row, dst, off, 20, true, AffineBlockWeights::q41Values);
  }

  private static void decodeQ51(ByteBuffer data, int cols, int row, float[] dst, int off) {
    BlockRows.decode(data, cols, row, dst, off, 24, true, AffineBlockWeights::q51Values);
  }
}
