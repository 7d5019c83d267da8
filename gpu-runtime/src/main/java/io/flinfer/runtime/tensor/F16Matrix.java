package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.HalfVectors;
import io.flinfer.runtime.kernel.HalfWeights;
import java.nio.ByteBuffer;

/** An IEEE half-precision weight matrix. */
final class F16Matrix extends CompactMatrix {
  F16Matrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols, HalfWeights::fp16, F16Matrix::decodeMapped);
  }

  @Override
  public GgmlType type() {
    return GgmlType.F16;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int base = row * cols * 2;
    for (int i = 0; i < cols; i++) {
      dst[off + i] = HalfFloats.fromHalf(data.getShort(base + i * 2));
    }
  }

  /** Row {@code row} of the mapped halves, converted in vector registers. */
  static void decodeMapped(ByteBuffer data, int cols, int row, float[] dst, int off) {
    int base = row * cols * 2;
    int i = 0;
    for (; i + HalfVectors.WIDE_LANES <= cols; i += HalfVectors.WIDE_LANES) {
      HalfVectors.fp16Wide(data, base + i * 2, dst, off + i);
    }
    for (; i < cols; i++) {
      dst[off + i] = HalfFloats.fromHalf(data.getShort(base + i * 2));
    }
  }
}
