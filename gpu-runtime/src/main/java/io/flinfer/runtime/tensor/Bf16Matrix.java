package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.HalfVectors;
import io.flinfer.runtime.kernel.HalfWeights;
import java.nio.ByteBuffer;

/** A bfloat16 weight matrix. */
final class Bf16Matrix extends CompactMatrix {
  Bf16Matrix(ByteBuffer data, int rows, int cols) {
    super(data, rows, cols, HalfWeights::bf16, Bf16Matrix::decodeMapped);
  }

  @Override
  public GgmlType type() {
    return GgmlType.BF16;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    int base = row * cols * 2;
    for (int i = 0; i < cols; i++) {
      dst[off + i] = HalfFloats.fromBf16(data.getShort(base + i * 2));
    }
  }

  /** Row {@code row} of the mapped halves, converted in vector registers. */
  static void decodeMapped(ByteBuffer data, int cols, int row, float[] dst, int off) {
    int base = row * cols * 2;
    int i = 0;
    for (; i + HalfVectors.WIDE_LANES <= cols; i += HalfVectors.WIDE_LANES) {
      HalfVectors.bf16Wide(data, base + i * 2, dst, off + i);
    }
    for (; i < cols; i++) {
      dst[off + i] = HalfFloats.fromBf16(data.getShort(base + i * 2));
    }
  }
}
