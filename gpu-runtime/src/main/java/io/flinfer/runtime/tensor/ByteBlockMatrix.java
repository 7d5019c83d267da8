package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.AffineBlockWeights;
import io.flinfer.runtime.kernel.BlockWeights;
import io.flinfer.runtime.kernel.ByteBlockFormat;
import java.nio.ByteBuffer;

/**
 * A matrix of 32-value blocks held on the heap as a byte per value ({@link ByteBlockFormat}): Q5_0
 * and IQ4_NL in the Q8_0 form, so that the Q8_0 kernels multiply them (1.6 and 1.9 times the file's
 * size), Q4_1 and Q5_1 with their offsets ({@link AffineBlockWeights}; 2 and 1.7 times).
 */
final class ByteBlockMatrix extends CompactMatrix {
  private final GgmlType type;
  private final ByteBlockFormat format;

  ByteBlockMatrix(GgmlType type, ByteBuffer data, int rows, int cols) {
    this(type, ByteBlockFormat.valueOf(type.name()), data, rows, cols);
  }

  private ByteBlockMatrix(
      GgmlType type, ByteBlockFormat format, ByteBuffer data, int rows, int cols) {
    super(
        data,
        rows,
        cols,
        // The heap form: a byte per value, and d (and m) as floats; the budget counts it.
        (long) rows * (cols / 32) * (32 + (format.offsets ? 8 : 4)),
        format.offsets
            ? (d, r, c) -> AffineBlockWeights.of(format, d, r, c)
            : (d, r, c) -> BlockWeights.of(format, d, r, c),
        (d, c, row, dst, off) -> decode(format, d, c, row, dst, off),
        type.ggmlActivations());
    this.type = type;
    this.format = format;
  }

  @Override
  public GgmlType type() {
    return type;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    decode(format, data, cols, row, dst, off);
  }

  /**
   * Row {@code row} of the blocks, value by value, {@code d * q} or {@code d * q + m}: the
   * reference, and the mapped rows (the heap copy's bits).
   */
  private static void decode(
      ByteBlockFormat format, ByteBuffer data, int cols, int row, float[] dst, int off) {
    int blocks = cols / 32;
    int base = row * blocks * format.blockBytes;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * format.blockBytes;
      float d = HalfFloats.fromHalf(data.getShort(p));
      float m = format.offsets ? HalfFloats.fromHalf(data.getShort(p + 2)) : 0;
      for (int j = 0; j < 32; j++) {
        float v = d * format.value(data, p, j);
        dst[off + b * 32 + j] = format.offsets ? v + m : v;
      }
    }
  }
}
