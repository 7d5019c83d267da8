package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.BlockWeights;
import io.flinfer.runtime.kernel.HalfVectors;
import java.nio.ByteBuffer;

/** A Q8_0 weight matrix: blocks of 32 int8 values sharing one fp16 scale. */
final class Q8Matrix extends CompactMatrix {
  Q8Matrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols, BlockWeights::q8, Q8Matrix::decodeMapped);
  }

  @Override
  public GgmlType type() {
    return GgmlType.Q8_0;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int blocks = cols / 32;
    int base = row * blocks * 34;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * 34;
      float d = HalfFloats.fromHalf(data.getShort(p));
      for (int j = 0; j < 32; j++) {
        dst[off + b * 32 + j] = d * data.get(p + 2 + j);
      }
    }
  }

  /** Row {@code row} of the mapped blocks, converted in vector registers. */
  static void decodeMapped(ByteBuffer data, int cols, int row, float[] dst, int off) {
    int blocks = cols / 32;
    int base = row * blocks * 34;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * 34;
      float d = HalfFloats.fromHalf(data.getShort(p));
      for (int j = 0; j < 32; j += HalfVectors.WIDE_LANES) {
        HalfVectors.int8Wide(data, p + 2 + j, d, dst, off + b * 32 + j);
      }
    }
  }
}
